// The authorization request as the checks build it, and the two kinds of
// failure: before the redirect URI is trusted (a bad request shown to the
// browser) and after (a redirect to the client carrying the error).
import type { ClientRecord } from '../../models/auth-store'
import type { ScopeRequest } from '../../helpers/scopes'

export type ResponseType = 'code' | 'token' | 'id_token token'
export type Provider = 'idp_default' | 'idp_legacy'
export type Display = 'page' | 'popup'

/** Where errors and results go once the redirect URI is trusted. */
export interface RedirectTarget {
  redirectUri: string
  state: string | undefined
  /** the code flow gets errors in the query too (RFC 6749); implicit flows only in the fragment */
  responseType: ResponseType | undefined
}

export interface AuthorizationRequest extends RedirectTarget {
  client: ClientRecord
  redirectUriGiven: boolean
  responseType: ResponseType
  provider: Provider
  /** a custom identity provider (federation) the user signs in at instead of the sign-in page */
  upstream?: string
  display: Display
  scope: string | null
  scopeRequest: ScopeRequest
  codeChallenge: string | undefined
  codeChallengeMethod: 'S256' | 'plain' | undefined
  nonce: string | undefined
  prompt: 'none' | 'login' | undefined
  /** prompt=consent: the user approves the grant on the consent page */
  consent: boolean
  maxAge: number | undefined
  idTokenHint: string | undefined
  sessionId: string
  /** the authorization parameters, carried through the sign-in form */
  params: URLSearchParams
}

/** A failure reported to the client through its (trusted) redirect URI. */
export class RedirectError extends Error {
  constructor(readonly target: RedirectTarget, readonly error: string, readonly description: string) {
    super(description)
  }
}

export const flowOf = (responseType: ResponseType): 'code' | 'implicit' => (responseType === 'code' ? 'code' : 'implicit')
