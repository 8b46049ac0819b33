// The shape of an /oauth2/v1 route: MethodSpecs that receive the path
// parameters the pattern captured; `scope` makes the dispatcher check the
// bearer token before anything else (the admin API).
import type { Exchange } from '../front/exchange'
import type { AuthServices, MethodSpec } from './services'

export interface OAuthMethod extends MethodSpec<string[]> {
  scope?: string
}

/**
 * GET with the parameters in the query and POST with them as a form, one
 * handler for both: the authorization and end-session endpoints accept
 * either (RFC 6749 section 3.1, OIDC RP-Initiated Logout).
 */
export function queryOrForm(answer: (s: AuthServices, ex: Exchange, params: URLSearchParams) => void): { GET: OAuthMethod; POST: OAuthMethod } {
  return {
    GET: { body: 'none', handle: (s, ex) => answer(s, ex, ex.query) },
    POST: { body: 'form', handle: (s, ex, _params, body) => answer(s, ex, new URLSearchParams(body!.toString('utf8'))) },
  }
}
