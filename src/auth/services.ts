// What the authorization service's handlers are handed (built once in
// src/main.ts). The graph routes declare their own part (src/graph/services.ts);
// the root composition (src/app/services.ts) is both.
import type { AccessTokens } from './models/access-tokens'
import type { OAuthServices } from './oauth-services'
import type { PasswordHasher } from './helpers/password-hasher'
import type { AddressSet } from '../net/addresses'
import { declareFor, type RouteMethod } from '../http/route'
import type { ActorPool } from '../shards/actor-pool'
import type { BackupResult } from '../backups/take-backup'

export interface AuthServices {
  publicUrl: string
  maxBody: number
  hasher: PasswordHasher
  tokens: AccessTokens
  oauth: OAuthServices
  /** proxies whose X-Forwarded-For names the client (--trust-proxy) */
  trustProxy: AddressSet
  /** The shard actors: the service's own event log lives in a shard (GET /oauth2/v1/events). */
  pool: ActorPool
  /** An online backup into a new directory (POST /oauth2/v1/admin/backups; src/backups/take-backup.ts). */
  backup(to: string): Promise<BackupResult>
}

/** A route method of the OAuth service: its handler gets the AuthServices (and nothing from the dispatcher's authentication). */
export type OAuthMethod = RouteMethod<AuthServices, object>

/** Declares an OAuth route method, its handler typed by the schemas it declares. */
export const oauthMethod = declareFor<AuthServices, object>()
