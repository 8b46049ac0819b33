// grant_type=refresh_token: only the client the refresh token was issued to
// may use it. The new access token has the intersection of the asked scopes
// and the refresh token's, never more, and is further limited by what the
// user, client and tenant allow today (a role taken away is not given back
// by an old refresh token). No refresh token in the answer.
import type { Exchange } from '../../../http/exchange'
import type { AuthServices } from '../../services'
import { requestSource } from '../../../net/client-source'
import { ApiError } from '../../../core/errors'
import type { RefreshTokenRecord } from '../../models/auth-store'
import { tokenClient } from '../../helpers/client-authentication'
import { invalidGrant, invalidRequest, single } from '../../helpers/oauth-errors'
import {
  grantScopes, invalidScope, OIDC_SCOPES, parseScopeRequest, plainScopes, targetOf, userGrantFor,
} from '../../helpers/scopes'
import type { TokenResponse } from '../../helpers/token-response'

/** The asked scopes intersected with the refresh token's; the tenant may be repeated, not changed. */
export function narrowScopes(record: Pick<RefreshTokenRecord, 'tenant' | 'org' | 'scopes'>, scopeParam: string | undefined): string[] {
  const granted = plainScopes(record.scopes)
  const req = parseScopeRequest(scopeParam, true)
  if (req.tenant !== undefined && req.tenant !== record.tenant) {
    throw invalidScope(`the refresh token is for ${record.tenant === undefined ? 'no tenant' : `tenant "${record.tenant}"`}, not "${req.tenant}"`)
  }
  if (req.org !== undefined && req.org !== record.org) throw invalidScope(`the refresh token is not for organization "${req.org}"`)
  return req.asked === undefined ? granted : granted.filter((s) => req.asked!.includes(s))
}

export async function refreshToken(s: AuthServices, ex: Exchange, form: URLSearchParams): Promise<TokenResponse> {
  const { client, authenticated } = await tokenClient(s.oauth.clients, s.oauth.secretChecks, ex.headers.authorization, form, () => requestSource(ex, s.trustProxy))
  const token = single(form, 'refresh_token')
  if (token === undefined || token === '') throw invalidRequest('refresh_token is required')
  const found = s.oauth.refreshTokens.find(token)
  if (found === undefined) throw invalidGrant('the refresh token is invalid or revoked')
  const { record } = found
  if (record.client !== client.client_id) throw invalidGrant('the refresh token was issued to another client')
  const user = record.sub === undefined ? undefined : s.oauth.users.find(record.sub)
  if (user === undefined) throw invalidGrant('the user of the refresh token no longer exists')
  const wanted = narrowScopes(record, single(form, 'scope'))
  let allowedNow: Set<string>
  try {
    allowedNow = new Set([...userGrantFor(s.oauth, client, user, targetOf(record), undefined, 'code').scopes, ...OIDC_SCOPES])
  } catch (err) {
    throw invalidGrant(`the refresh token no longer applies: ${err instanceof ApiError ? err.message : String(err)}`)
  }
  const scopes = grantScopes({ tenant: record.tenant, org: record.org, scopes: wanted.filter((sc) => allowedNow.has(sc)) })
  const access = s.tokens.mint({
    client: client.client_id, clientAuthenticated: authenticated, tenant: record.tenant, org: record.org,
    scopes, sub: user.id, sessionId: record.sessionId, refresh: found.hash,
  })
  const stored = await s.oauth.refreshTokens.attach(found.hash, { hash: access.hash, exp: access.record.exp }, () => s.tokens.put(access))
  if (!stored) throw invalidGrant('the refresh token is invalid or revoked')
  return { access_token: access.token, token_type: 'Bearer', expires_in: s.tokens.ttl, scope: scopes.join(' ') }
}
