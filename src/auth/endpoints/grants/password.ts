// grant_type=password (deprecated): username and password checked under the
// lock-out rules, served by the idp_legacy provider only. Client
// authentication follows the table of spec 5.2 (passwordGrantClient). No
// refresh token.
import type { Exchange } from '../../../http/exchange'
import type { AuthServices } from '../../services'
import { requestSource } from '../../../net/client-source'
import { passwordGrantClient } from '../../helpers/client-authentication'
import { tooManyAttempts } from '../../models/lockout'
import { nameTooLong } from '../../../model/name-limit'
import { invalidGrant, invalidRequest, single } from '../../helpers/oauth-errors'
import { grantScopes, parseScopeRequest, scopeString, userGrant } from '../../helpers/scopes'
import { SESSION_ID_PARAM, sessionIdOf } from '../../helpers/session-id'
import { requireGrantType, type TokenResponse } from '../../helpers/token-response'

export const LEGACY_PROVIDER = 'idp_legacy'

export async function password(s: AuthServices, ex: Exchange, form: URLSearchParams): Promise<TokenResponse> {
  const provider = single(form, 'platform_id_provider')
  if (provider !== undefined && provider !== LEGACY_PROVIDER) {
    throw invalidRequest(`the password grant is served by platform_id_provider=${LEGACY_PROVIDER} only, not "${provider}"`)
  }
  const username = single(form, 'username')
  const pass = single(form, 'password')
  if (username === undefined || username === '') throw invalidRequest('username is required')
  const long = nameTooLong('username', username)
  if (long !== undefined) throw invalidRequest(long)
  if (pass === undefined || pass === '') throw invalidRequest('password is required')
  const scope = single(form, 'scope') ?? null
  parseScopeRequest(scope, true)
  const sessionId = sessionIdOf(single(form, SESSION_ID_PARAM), ex.headers['platform-session-id'])
  const source = requestSource(ex, s.trustProxy)
  const { client, authenticated } = await passwordGrantClient(s.oauth.clients, s.oauth.secretChecks, ex.headers.authorization, form, () => source)
  if (client !== undefined) requireGrantType(client, 'password')
  const result = await s.oauth.signIn.authenticate(username, pass, source, true)
  if (!result.ok) throw result.reason === 'blocked' ? tooManyAttempts(true) : invalidGrant('invalid username or password')
  const grant = userGrant(s.oauth, client, result.user, scope, 'password')
  const { token } = await s.tokens.issue({
    client: client?.client_id, clientAuthenticated: authenticated, tenant: grant.tenant, org: grant.org,
    scopes: grantScopes(grant), sub: result.user.id, sessionId,
  })
  return { access_token: token, token_type: 'Bearer', expires_in: s.tokens.ttl, scope: scopeString(grant) }
}
