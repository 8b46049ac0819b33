// A route method: whether it reads a body, and its handler; the graph and
// OAuth route tables add the scope each needs (src/graph/routes.ts,
// src/auth/route-types.ts). The dispatcher (src/front/dispatch.ts) does the
// common lifecycle: match, 405, authenticate, content type, body limit, JSON
// limits, then the handler.
import type { Exchange } from './exchange'
import type { BodyKind } from './media-type'
import type { Services } from '../auth/services'

export type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'

export interface MethodSpec<P> {
  /** The body's media type, checked before it is read; 'none' is never read. */
  body: BodyKind | 'none'
  handle(s: Services, ex: Exchange, params: P, body: Buffer | undefined): void
}
