// The shape of an /oauth2/v1 route: OAuthMethods (src/auth/services.ts)
// that receive the path parameters the pattern captured; `scope` makes the
// dispatcher check the bearer token before anything else (the admin API).
import type { TSchema } from '@sinclair/typebox'
import type { Answers } from '../http/route'
import type { Exchange } from '../http/exchange'
import { oauthMethod, type AuthServices, type OAuthMethod } from './services'

export type { OAuthMethod } from './services'

/**
 * GET with the parameters in the query and POST with them as a form, one
 * handler for both: the authorization and end-session endpoints accept
 * either (RFC 6749 section 3.1, OIDC RP-Initiated Logout).
 */
export function queryOrForm(answer: (s: AuthServices, ex: Exchange, params: URLSearchParams) => void, summary: string, params: TSchema, answers: Answers): { GET: OAuthMethod; POST: OAuthMethod } {
  // A redirect after a form post is a 303 (the browser follows with GET), a 302 after a GET.
  const { 302: redirect, ...others } = answers
  const posted: Answers = redirect === undefined ? answers : { ...others, 303: redirect }
  const doc = { summary, errorPages: true, errors: ['bad_request', 'forbidden', 'insufficient_credentials', 'too_many_attempts', 'too_many_requests'] } as const
  return {
    GET: oauthMethod({ body: 'none', ...doc, answers, documentedQuery: params, handle: (s, ex) => answer(s, ex, ex.query) }),
    POST: oauthMethod({ body: 'form', ...doc, answers: posted, documented: params, handle: (s, ex, { body }) => answer(s, ex, new URLSearchParams(body.toString('utf8'))) }),
  }
}
