// GET and DELETE /oauth2/v1/refreshtokens: the refresh tokens of the user
// of the bearer access token (never anyone else's), optionally only those
// of one client (`client_id`) or one token (`id`, from the listing). A
// listing shows public identifiers, never the tokens. DELETE ends them and
// the access tokens issued with them (204).
import type { Exchange } from '../../http/exchange'
import type { AuthServices } from '../services'
import { ApiError } from '../../core/errors'
import { liveBearer } from '../helpers/bearer'
import { single } from '../helpers/oauth-errors'
import type { OAuthMethod } from '../route-types'
import type { StoredRefreshToken } from '../models/refresh-tokens'
import { NO_STORE } from '../helpers/token-response'
import { NO_BODY } from '../../http/route'
import { RefreshTokenList } from './answers'

function selected(s: AuthServices, ex: Exchange): StoredRefreshToken[] {
  const { record } = liveBearer(s.tokens, ex.headers.authorization)
  if (record.sub === undefined) throw new ApiError('forbidden', 'refresh tokens are managed with an access token issued for a user')
  const query = ex.query
  const client = single(query, 'client_id')
  const id = single(query, 'id')
  return s.oauth.refreshTokens.ofUser(record.sub, client).filter((t) => id === undefined || t.record.id === id)
}

export const listRefreshTokens: OAuthMethod = {
  body: 'none',
  authenticates: 'bearer',
  answers: { 200: RefreshTokenList },
  // a token issued to a client alone has no user whose tokens these would be
  errors: ['bad_request', 'forbidden'],
  summary: "The user's refresh tokens",
  handle(s, ex) {
    const list = selected(s, ex).map(({ record }) => ({
      id: record.id,
      client_id: record.client,
      tenant: record.tenant ?? null,
      scope: record.scopes.join(' '),
      created: new Date(record.created).toISOString(),
    }))
    ex.json(200, JSON.stringify(list), NO_STORE)
  },
}

export const deleteRefreshTokens: OAuthMethod = {
  body: 'none',
  authenticates: 'bearer',
  answers: { 204: NO_BODY },
  errors: ['bad_request', 'forbidden'],
  summary: "Delete the user's refresh tokens",
  handle(s, ex) {
    const tokens = selected(s, ex)
    Promise.all(tokens.map((t) => s.oauth.refreshTokens.revokeHash(t.hash)))
      .then(() => ex.empty(204), (err: unknown) => ex.error(err))
  },
}
