// What the dispatcher sees of the authorization service in a cluster
// (docs/manual/cluster.md, "The authorization service in a cluster"): one host, the
// holder of the auth lease, serves every OAuth, admin and gateway request and
// answers every bearer-token check; the others hand those to it. Types only:
// on one machine nothing of this loads.
import type { HttpRequest } from 'uWebSockets.js'
import type { AccessTokenRecord } from '../auth/models/auth-store'
import type { Exchange } from '../http/exchange'

export interface AuthCluster {
  /** Whether this host serves the authorization service now (it holds a valid auth lease). */
  servesHere(): boolean
  /** Hands the whole request to the owner and relays its answer; a 503 with Retry-After when there is none. */
  proxy(ex: Exchange, req: HttpRequest): void
  /** The token's live record as the owner has it (undefined: invalid, expired or revoked); rejects with a 503 ApiError without an owner. */
  verify(token: string): Promise<AccessTokenRecord | undefined>
}
