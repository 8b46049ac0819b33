// A route method: whether it reads a body, and its handler; the graph and
// OAuth route tables add the scope each needs (src/graph/routes.ts,
// src/auth/route-types.ts). The dispatcher (src/dispatch.ts) does the
// common lifecycle: match, 405, authenticate, content type, body limit, JSON
// limits, then the handler. `S` is what the handler is handed (the
// services, src/auth/services.ts): the edge does not know its users.
import type { Exchange } from './exchange'
import type { BodyKind } from './media-type'

export type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'

export interface RouteMethod<P, S> {
  /** The body's media type, checked before it is read; 'none' is never read. */
  body: BodyKind | 'none'
  handle(s: S, ex: Exchange, params: P, body: Buffer | undefined): void
}
