// What the graph routes' handlers are handed (built once in src/main.ts;
// the root composition, src/app/services.ts, is this and the auth part).
import type { AccessTokens } from '../auth/models/access-tokens'
import type { AccessTokenRecord } from '../auth/models/auth-store'
import type { SubjectAccount } from '../auth/models/subject-account'
import type { Exchange } from '../http/exchange'
import type { JsonLimits } from '../http/json-limits'
import type { Urls } from '../contract/urls'
import { declareFor, type RouteMethod } from '../http/route'
import type { StreamBuffers } from '../http/stream'
import type { Metamodel } from '../model/metamodel'
import type { WebhookPolicy } from '../net/webhook-policy'
import type { ActorPool } from '../shards/actor-pool'
import type { LineBody } from './bulk-line'
import type { GraphCaller } from './params'

export interface GraphServices {
  publicUrl: string
  urls: Urls
  pool: ActorPool
  metamodel: Metamodel
  /** bearer tokens (the WebSocket upgrade checks its own) */
  tokens: AccessTokens
  /** At most this many open event streams per tenant (ws-stream.ts). */
  maxStreamsPerTenant: number
  /** What streamed answers hold for slow readers, in all, and its limit (--max-stream-buffer-mb). */
  streamBuffers: StreamBuffers
  /** where tenants' webhooks may point */
  webhookPolicy: WebhookPolicy
  /** Origins whose pages may call the graph API and open the event stream (--cors-origins). */
  corsOrigins: ReadonlySet<string>
  /** Dispatches one line of a bulk request as the single request it stands for (src/app/dispatch.ts). */
  dispatchLine(ex: Exchange, tenant: string, token: AccessTokenRecord, body: LineBody | undefined): void
  /** Depth and element bounds of every JSON request body, checked before it is parsed. */
  jsonLimits: JsonLimits
  /** The body limit of a single request, which a bulk line's body is held to too. */
  maxBody: number
  /** A data subject's record in the authorization service (their export shows it); null when the subject is no user. */
  account(subject: string): SubjectAccount | null
}

/** A route method of the graph service: its handler gets the GraphServices and the caller. */
export type GraphHandler = RouteMethod<GraphServices, GraphCaller>

/** Declares a graph route method, its handler typed by the schemas it declares. */
export const graphMethod = declareFor<GraphServices, GraphCaller>()
