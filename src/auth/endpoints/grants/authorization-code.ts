// grant_type=authorization_code: the code is single-use, short-lived and
// bound to the client, the redirect URI and the PKCE challenge of its
// authorization request. The answer carries a refresh token, and an ID token
// when openid was granted. A replayed code fails and revokes what the first
// exchange gave.
import { createHash } from 'node:crypto'
import type { Exchange } from '../../../http/exchange'
import type { AuthServices } from '../../services'
import { requestSource } from '../../../net/client-source'
import type { CodeRecord, GrantFields } from '../../models/auth-store'
import { tokenClient } from '../../helpers/client-authentication'
import { signIdToken } from '../../helpers/id-tokens'
import { invalidGrant, invalidRequest, single } from '../../helpers/oauth-errors'
import { OPENID_SCOPE, parseScopeRequest, plainScopes, grantScopes } from '../../helpers/scopes'
import { requireGrantType, type TokenResponse } from '../../helpers/token-response'
import { isAccountClient } from '../../models/account-client'

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

/** RFC 7636 4.6: the verifier, transformed by the challenge's method, must equal the challenge. */
export function pkceMatches(record: Pick<CodeRecord, 'codeChallenge' | 'codeChallengeMethod'>, verifier: string | undefined): boolean {
  if (record.codeChallenge === undefined) return verifier === undefined
  if (verifier === undefined || !VERIFIER.test(verifier)) return false
  const transformed = record.codeChallengeMethod === 'S256' ? createHash('sha256').update(verifier, 'ascii').digest('base64url') : verifier
  return transformed === record.codeChallenge
}

/** The scope parameter at the exchange may only narrow what the code grants. */
function narrowed(record: CodeRecord, scopeParam: string | undefined): string[] {
  if (scopeParam === undefined) return record.scopes
  const req = parseScopeRequest(scopeParam, false)
  if (req.tenant !== undefined && req.tenant !== record.tenant) throw invalidGrant(`the code was issued for tenant "${record.tenant ?? ''}"`)
  if (req.asked === undefined) return record.scopes
  const granted = plainScopes(record.scopes)
  const scopes = granted.filter((s) => req.asked!.includes(s))
  return grantScopes({ tenant: record.tenant, org: record.org, scopes })
}

export async function authorizationCode(s: AuthServices, ex: Exchange, form: URLSearchParams): Promise<TokenResponse> {
  const { client, authenticated } = await tokenClient(s.oauth.clients, s.oauth.secretChecks, ex.headers.authorization, form, () => requestSource(ex, s.trustProxy))
  requireGrantType(client, 'authorization_code')
  const code = single(form, 'code')
  if (code === undefined || code === '') throw invalidRequest('code is required')
  const record = s.oauth.codes.find(code)
  if (record === undefined) throw invalidGrant('the code is invalid or expired')
  if (record.used !== undefined) {
    await s.oauth.codes.revokeGiven(record)
    throw invalidGrant('the code was already used; the tokens it gave are revoked')
  }
  if (record.client !== client.client_id) throw invalidGrant('the code was issued to another client')
  const redirectUri = single(form, 'redirect_uri')
  if (record.redirectUriGiven && redirectUri === undefined) throw invalidGrant('redirect_uri is required: the authorization request named one')
  if (redirectUri !== undefined && redirectUri !== record.redirectUri) throw invalidGrant('redirect_uri differs from the authorization request')
  if (!pkceMatches(record, single(form, 'code_verifier'))) {
    throw invalidGrant(record.codeChallenge === undefined
      ? 'code_verifier was sent but the authorization request had no code_challenge'
      : 'code_verifier is missing or does not match the code_challenge')
  }
  const user = record.sub === undefined ? undefined : s.oauth.users.find(record.sub)
  if (user === undefined) throw invalidGrant('the user of the code no longer exists')

  const grantFields: GrantFields = {
    client: client.client_id, clientAuthenticated: authenticated, tenant: record.tenant, org: record.org,
    scopes: narrowed(record, single(form, 'scope')), sub: user.id, sessionId: record.sessionId,
  }
  // The account page's client gets none: a page keeps nothing beyond its tab, and refresh tokens never expire.
  const refresh = isAccountClient(client) ? undefined : s.oauth.refreshTokens.mint(grantFields)
  const access = s.tokens.mint({ ...grantFields, ...(refresh === undefined ? {} : { refresh: refresh.hash }) })
  const idToken = grantFields.scopes.includes(OPENID_SCOPE)
    ? await signIdToken(s.oauth.keys, {
      issuer: s.oauth.issuer, clientId: client.client_id, user, scopes: grantFields.scopes, nonce: record.nonce, authTime: record.authTime,
      accessToken: access.token, ttlSeconds: s.oauth.idTokenTtl,
    })
    : undefined
  // Of two concurrent exchanges exactly one wins; the loser revokes what the winner got.
  if (!await s.oauth.codes.consume(code, access, refresh)) throw invalidGrant('the code was already used; the tokens it gave are revoked')
  const answer: TokenResponse = {
    access_token: access.token, token_type: 'Bearer', expires_in: s.tokens.ttl,
    scope: grantFields.scopes.join(' '),
  }
  if (refresh !== undefined) answer.refresh_token = refresh.token
  if (idToken !== undefined) answer.id_token = idToken
  return answer
}
