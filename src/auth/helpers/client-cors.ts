// Which browser origins may call the authorization service (client-based
// CORS, as oidc-provider's clientBasedCORS): discovery, the RFC 8414
// metadata and the JWKS are public; the token, userinfo, revoke,
// introspection and end-session endpoints may be read by the origins of the
// calling client's redirect URIs and its `cors_origins`. A preflight says
// nothing about the client, so it is allowed for an origin some client has;
// the answer itself is readable only by the calling client's origins (an
// error naming no client by the origins the preflight allows), and the
// token, revoke and introspection endpoints refuse a request from another
// origin before doing anything (requireClientOrigin).
import type { CorsPolicy } from '../../http/cors'
import type { Exchange } from '../../http/exchange'
import { originOf } from '../../net/origin'
import type { ClientRecord } from '../models/auth-store'
import type { AuthServices } from '../services'
import { bearerToken } from './bearer'
import { presentedCredentials } from './client-authentication'
import { invalidRequest } from './oauth-errors'

/** The endpoints under /oauth2/v1 anyone may read: documents of public keys and endpoints. */
const PUBLIC_PATHS = new Set(['.well-known/openid-configuration', '.well-known/jwks.json', '.well-known/oauth-authorization-server'])
/** The endpoints a browser client calls with its own identity. */
const CLIENT_PATHS = new Set(['token', 'userinfo', 'revoke', 'introspect', 'end_session'])

const PUBLIC: CorsPolicy = { kind: 'public' }

/** The origins whose pages may call for client `c`: those of its redirect URIs, and its cors_origins. */
export function clientOrigins(c: ClientRecord): Set<string> {
  const out = new Set<string>()
  for (const uri of c.redirect_uris) {
    const origin = originOf(uri)
    if (origin !== undefined) out.add(origin)
  }
  for (const origin of c.cors_origins ?? []) out.add(origin)
  return out
}

/** The client a handler identified (from the body, which the edge never sees). */
const noted = new WeakMap<Exchange, string>()

/** The client of the request as far as the headers and query tell: Basic credentials, a bearer token's client, client_id. */
function clientFromRequest(s: AuthServices, ex: Exchange): string | undefined {
  const authorization = ex.headers.authorization
  try {
    const basic = presentedCredentials(authorization, new URLSearchParams())
    if (basic !== undefined) return basic.clientId
  } catch {
    return undefined
  }
  const token = bearerToken(authorization)
  if (token !== undefined) return s.tokens.verify(token)?.client
  return ex.rawQuery === undefined || ex.rawQuery === '' ? undefined : ex.query.get('client_id') ?? undefined
}

function allowedFor(s: AuthServices, clientId: string | undefined, origin: string): boolean {
  const client = clientId === undefined ? undefined : s.oauth.clients.find(clientId)
  return client !== undefined && clientOrigins(client).has(origin)
}

/**
 * Whether the page may read this answer: the client's origins decide when
 * the request names a known client. An error that names none (no or an
 * unknown token, unknown client, body refused before it was read) is
 * readable by the origins the preflight admits: otherwise the page sees a
 * network error instead of its 401, 413 or 429.
 */
function readableBy(s: AuthServices, ex: Exchange, origin: string): boolean {
  const clientId = noted.get(ex) ?? clientFromRequest(s, ex)
  const client = clientId === undefined ? undefined : s.oauth.clients.find(clientId)
  if (client !== undefined) return clientOrigins(client).has(origin)
  return ex.status >= 400 && someClientAllows(s, origin)
}

function someClientAllows(s: AuthServices, origin: string): boolean {
  for (const c of s.oauth.clients.all()) if (clientOrigins(c).has(origin)) return true
  return false
}

/** The policy of a path under /oauth2/v1 (its segments), or undefined when no other origin may call it. */
export function oauthCorsPolicy(s: AuthServices, path: readonly string[]): CorsPolicy | undefined {
  const joined = path.join('/')
  if (PUBLIC_PATHS.has(joined)) return PUBLIC
  if (!CLIENT_PATHS.has(joined)) return undefined
  return {
    kind: 'listed',
    preflight: (origin) => someClientAllows(s, origin),
    request: (origin, ex) => {
      try {
        return readableBy(s, ex, origin)
      } catch {
        return false // written while answering: an unreadable answer, never a second error
      }
    },
  }
}

/**
 * Called by the token, revoke and introspection endpoints once the body
 * names the client: a request from a browser page whose origin the client
 * does not allow is refused (400 invalid_request) before it has any effect.
 */
export function requireClientOrigin(s: AuthServices, ex: Exchange, form: URLSearchParams): void {
  const clientId = presentedCredentials(ex.headers.authorization, form)?.clientId
  if (clientId === undefined) return
  noted.set(ex, clientId)
  const origin = ex.headers.origin
  if (origin === '' || origin === originOf(s.publicUrl) || s.oauth.clients.find(clientId) === undefined) return
  if (!allowedFor(s, clientId, origin)) throw invalidRequest(`origin ${origin} is not allowed for client "${clientId}": add it to the client's cors_origins`)
}
