// Which origins may call which path from a browser (src/http/cors.ts does
// the headers): the authorization service decides per client
// (src/auth/helpers/client-cors.ts); the graph API allows the operator's
// --cors-origins; the RFC 8414 metadata at the root is public.
import { oauthCorsPolicy } from '../auth/helpers/client-cors'
import { applyCors, originList, type CorsPolicy } from '../http/cors'
import type { Exchange } from '../http/exchange'
import type { Services } from './services'

const PUBLIC: CorsPolicy = { kind: 'public' }

function policyFor(s: Services, segments: readonly string[]): CorsPolicy | undefined {
  if (segments[1] === 'v1' && segments[0] === 'oauth2') return oauthCorsPolicy(s, segments.slice(2))
  if (segments[1] === 'v1' && segments[0] === 'graph') return originList(s.corsOrigins)
  if (segments[0] === '.well-known') return PUBLIC
  return undefined
}

/** The decoded segments, or as sent when they do not decode: that 400 carries the path's CORS headers too. */
function segmentsOf(ex: Exchange): readonly string[] {
  try {
    return ex.segments
  } catch {
    return ex.rawPath.split('/').slice(1)
  }
}

/** True when the request was a preflight and has been answered; a request without Origin costs one comparison. */
export function answerCors(s: Services, ex: Exchange): boolean {
  if (ex.headers.origin === '') return false
  const segments = segmentsOf(ex)
  // The gateway forwards every method, OPTIONS included: the service behind it answers its own preflights.
  return segments[0] !== 'gateway' && applyCors(ex, policyFor(s, segments))
}
