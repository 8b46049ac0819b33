// POST /oauth2/v1/revoke (RFC 7009 and spec section 4): one or more `token`
// values, access or refresh tokens mixed; the type is recognised. A token
// issued to an authenticated client is revoked only for that client; a
// token issued without client authentication by anyone holding it. Without
// credentials, the unauthenticated tokens are revoked and, if any token
// needed credentials, the answer is 401. Unknown, expired or already
// revoked tokens are ignored (200). Revoking a refresh token also revokes the
// access tokens issued with it.
import { REVOKE_FORM } from './documented-forms'
import type { Exchange } from '../../http/exchange'
import { oauthMethod, type AuthServices } from '../services'
import { requestSource } from '../../net/client-source'
import type { ClientRecord, GrantFields } from '../models/auth-store'
import { authenticateClient, invalidClient, presentedCredentials } from '../helpers/client-authentication'
import { invalidRequest, oauthError } from '../helpers/oauth-errors'
import { requireClientOrigin } from '../helpers/client-cors'
import { NO_STORE } from '../helpers/token-response'
import { NO_BODY } from '../../http/route'

/** `hash`: the key the token is stored under (an access token's tokenKey, a refresh token's SHA-256). */
type Found = { kind: 'access' | 'refresh'; hash: string; record: GrantFields }

function find(s: AuthServices, token: string): Found | undefined {
  const accessKey = s.tokens.keyOf(token)
  const access = s.tokens.verifyHash(accessKey)
  if (access !== undefined) return { kind: 'access', hash: accessKey, record: access }
  const refresh = s.oauth.refreshTokens.find(token)
  return refresh === undefined ? undefined : { kind: 'refresh', hash: refresh.hash, record: refresh.record }
}

async function revokeFound(s: AuthServices, found: Found): Promise<void> {
  if (found.kind === 'access') await s.tokens.revokeHash(found.hash)
  else await s.oauth.refreshTokens.revokeHash(found.hash)
}

async function revoke(s: AuthServices, ex: Exchange, form: URLSearchParams): Promise<void> {
  const tokens = form.getAll('token').filter((t) => t !== '')
  if (tokens.length === 0) throw invalidRequest('token is required')
  requireClientOrigin(s, ex, form)
  const creds = presentedCredentials(ex.headers.authorization, form)
  // A wrong secret fails the whole request; client_id alone authenticates nobody.
  const caller: ClientRecord | undefined = creds?.clientSecret !== undefined ? await authenticateClient(s.oauth.clients, s.oauth.secretChecks, creds, () => requestSource(ex, s.trustProxy)) : undefined
  let needCredentials = 0
  let foreign = 0
  for (const token of tokens) {
    const found = find(s, token)
    if (found === undefined) continue
    const open = found.record.clientAuthenticated === false
    if (open || (caller !== undefined && found.record.client === caller.client_id)) await revokeFound(s, found)
    else if (caller === undefined) needCredentials++
    else foreign++
  }
  if (needCredentials > 0) {
    throw invalidClient(
      `${needCredentials} token(s) were issued to an authenticated client and need its credentials (Authorization: Basic); tokens issued without client authentication were revoked`,
      creds?.via === 'basic' || creds === undefined,
    )
  }
  if (foreign > 0) {
    throw oauthError('unauthorized_client', `${foreign} token(s) were not issued to client "${caller!.client_id}" and were not revoked`, 'forbidden')
  }
  ex.empty(200, NO_STORE)
}

export const revokeEndpoint = oauthMethod({
  body: 'form',
  authenticates: 'client',
  documented: REVOKE_FORM,
  answers: { 200: NO_BODY },
  errors: ['too_many_requests'],
  summary: 'Revoke an access or refresh token (RFC 7009)',
  handle(s, ex, { body }) {
    revoke(s, ex, new URLSearchParams(body.toString('utf8'))).catch((err: unknown) => ex.error(err))
  },
})
