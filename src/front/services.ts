// What the routes share: built once in main.ts and passed to every handler.
import type { AccessTokens } from '../auth/models/access-tokens'
import type { AuthStore } from '../auth/models/auth-store'
import type { OAuthServices } from '../auth/oauth-services'
import type { PasswordHasher } from '../auth/helpers/password-hasher'
import type { WebhookPolicy } from '../events/webhook-policy'
import type { Metamodel } from '../model/metamodel'
import type { AddressSet } from '../net/addresses'
import type { Urls } from '../model/urls'
import type { ActorPool } from '../shard/actor-pool'
import type { JsonLimits } from './json-limits'

export interface Services {
  publicUrl: string
  urls: Urls
  maxBody: number
  /** Depth and element bounds of every JSON request body, checked before it is parsed. */
  jsonLimits: JsonLimits
  /** At most this many open event streams per tenant (src/events/ws-stream.ts). */
  maxStreamsPerTenant: number
  pool: ActorPool
  metamodel: Metamodel
  authStore: AuthStore
  hasher: PasswordHasher
  tokens: AccessTokens
  oauth: OAuthServices
  /** where tenants' webhooks may point */
  webhookPolicy: WebhookPolicy
  /** proxies whose X-Forwarded-For names the client (--trust-proxy) */
  trustProxy: AddressSet
}
