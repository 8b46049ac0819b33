// The CORS protocol (Fetch standard) at the edge: answers preflights before
// any routing or authentication, and marks the answers a browser on another
// origin may read. Which origins may read what is the caller's policy
// (src/app/cors-policy.ts); this module only knows the headers.
import { ApiError } from '../core/errors'
import type { Exchange, ResponseHeaders } from './exchange'

/**
 * `public`: any origin may read (discovery, JWKS). `listed`: `preflight`
 * says whether the origin may send the request at all (before anything about
 * the request is known), `request` whether it may read this answer (called
 * when the answer is written, so it can use what the handler learnt, such as
 * the client).
 */
export type CorsPolicy =
  | { kind: 'public' }
  | { kind: 'listed'; preflight(origin: string): boolean; request(origin: string, ex: Exchange): boolean }

const ALLOW_METHODS = 'GET, HEAD, PUT, POST, DELETE'
/** The request headers the API reads (src/http/exchange.ts) that are not CORS-safelisted. */
const ALLOW_HEADERS = [
  'authorization', 'content-type', 'consent-reference', 'platform-context-trace-id', 'platform-session-id',
  'platform-schedule-event-at', 'platform-schedule-event-parameter', 'platform-decay-at', 'platform-decay-parameters',
  'traceparent',
].join(', ')
/** Response headers a client needs beyond the safelisted ones: error details, created locations, counts. */
const EXPOSE_HEADERS = 'www-authenticate, location, retry-after, allow, x-total-count, x-request-id'
/** Browsers cap it (Chromium at 2 hours); 10 minutes keeps a changed client list effective soon. */
const MAX_AGE = '600'

const PUBLIC: ResponseHeaders = { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSE_HEADERS }
/** A refused origin still learns that the answer depends on it, so that no cache hands it to another. */
const REFUSED: ResponseHeaders = { vary: 'origin' }

const readable = (origin: string): ResponseHeaders => ({
  'access-control-allow-origin': origin, vary: 'origin', 'access-control-expose-headers': EXPOSE_HEADERS,
})

/** An OPTIONS request a browser sends before a request it may not send unasked. */
export function isPreflight(ex: Exchange): boolean {
  return ex.method === 'OPTIONS' && ex.headers.origin !== '' && ex.headers['access-control-request-method'] !== ''
}

/**
 * Applies `policy` (undefined: the path allows no other origin) to the
 * exchange: a preflight is answered here (204, or 403 naming the origin) and
 * true is returned; any other request from a browser gets the headers of its
 * answer decided when it is written.
 */
export function applyCors(ex: Exchange, policy: CorsPolicy | undefined): boolean {
  const origin = ex.headers.origin
  if (origin === '') return false
  if (isPreflight(ex)) {
    if (policy === undefined || (policy.kind === 'listed' && !policy.preflight(origin))) {
      throw new ApiError('forbidden', `a page of origin ${origin} may not call ${ex.rawPath} (CORS): the origin is not allowed here`)
    }
    ex.empty(204, {
      ...(policy.kind === 'public' ? { 'access-control-allow-origin': '*' } : { 'access-control-allow-origin': origin, vary: 'origin' }),
      'access-control-allow-methods': ALLOW_METHODS,
      'access-control-allow-headers': ALLOW_HEADERS,
      'access-control-max-age': MAX_AGE,
    })
    return true
  }
  if (policy !== undefined) ex.lateHeaders = () => (policy.kind === 'public' ? PUBLIC : policy.request(origin, ex) ? readable(origin) : REFUSED)
  return false
}

/** A policy for a fixed list of origins (the graph API's --cors-origins). */
export function originList(origins: ReadonlySet<string>): CorsPolicy | undefined {
  if (origins.size === 0) return undefined
  const allowed = (origin: string): boolean => origins.has(origin)
  return { kind: 'listed', preflight: allowed, request: allowed }
}
