// grant_type=client_credentials: a confidential client, authenticated by
// Basic or body credentials, gets a token for its tenant or a subscriber.
import type { Exchange } from '../../../http/exchange'
import type { AuthServices } from '../../services'
import { requestSource } from '../../../net/client-source'
import { invalidClient, tokenClient } from '../../helpers/client-authentication'
import { single } from '../../helpers/oauth-errors'
import { clientCredentialsGrant, grantScopes, scopeString } from '../../helpers/scopes'
import { SESSION_ID_PARAM, sessionIdOf } from '../../helpers/session-id'
import { requireGrantType, type TokenResponse } from '../../helpers/token-response'

export async function clientCredentials(s: AuthServices, ex: Exchange, form: URLSearchParams): Promise<TokenResponse> {
  const { client, authenticated } = await tokenClient(s.oauth.clients, s.oauth.secretChecks, ex.headers.authorization, form, () => requestSource(ex, s.trustProxy))
  if (!authenticated) throw invalidClient(`client "${client.client_id}" is public: client_credentials needs a client secret`, false)
  requireGrantType(client, 'client_credentials')
  const grant = clientCredentialsGrant(s.oauth, client, single(form, 'scope') ?? null)
  const sessionId = sessionIdOf(single(form, SESSION_ID_PARAM), ex.headers['platform-session-id'])
  const { token } = await s.tokens.issue({
    client: client.client_id, clientAuthenticated: true, tenant: grant.tenant, scopes: grantScopes(grant), sub: undefined, sessionId,
  })
  return { access_token: token, token_type: 'Bearer', expires_in: s.tokens.ttl, scope: scopeString(grant) }
}
