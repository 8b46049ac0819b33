// A route: the methods it answers, the scope each needs and whether it reads
// a body. The dispatcher (src/front/dispatch.ts) does the common lifecycle:
// match, 405, authenticate, content type, body limit, then the handler.
import type { Exchange } from './exchange'
import type { BodyKind } from './media-type'
import type { Services } from './services'

export type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'

export interface MethodSpec<P> {
  /** The body's media type, checked before it is read; 'none' is never read. */
  body: BodyKind | 'none'
  handle(s: Services, ex: Exchange, params: P, body: Buffer | undefined): void
}
