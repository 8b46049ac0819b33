// What the routes share: built once in main.ts and passed to every handler.
// It lives with auth, the lower of the two route families, because it holds
// auth's stores; the graph routes and the root composition import it from here.
import type { AccessTokens } from './models/access-tokens'
import type { AuthStore } from './models/auth-store'
import type { OAuthServices } from './oauth-services'
import type { PasswordHasher } from './helpers/password-hasher'
import type { WebhookPolicy } from '../net/webhook-policy'
import type { Metamodel } from '../model/metamodel'
import type { AddressSet } from '../net/addresses'
import type { Urls } from '../contract/urls'
import type { ActorPool } from '../shard/actor-pool'
import type { JsonLimits } from '../front/json-limits'
import type { RouteMethod } from '../front/route'

export interface Services {
  publicUrl: string
  urls: Urls
  maxBody: number
  /** Depth and element bounds of every JSON request body, checked before it is parsed. */
  jsonLimits: JsonLimits
  /** At most this many open event streams per tenant (src/graph/ws-stream.ts). */
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

/** A route method of the graph or the OAuth service: its handler gets the Services. */
export type MethodSpec<P> = RouteMethod<P, Services>
