// GET and POST /oauth2/v1/userinfo (OpenID Connect Core 5.3): the claims of
// the user of an access token that was granted `openid`. The token comes as
// a Bearer header, or (POST) as the form parameter access_token (RFC 6750).
// Besides the standard claims, `tenants`: the ids of the user's tenants.
import { ApiError } from '../../core/errors'
import { readBody } from '../../http/body'
import type { Exchange } from '../../http/exchange'
import { requireMediaType } from '../../http/media-type'
import type { AuthServices } from '../services'
import { insufficientScope, liveBearer } from '../helpers/bearer'
import { invalidRequest, invalidToken } from '../helpers/oauth-errors'
import type { OAuthMethod } from '../route-types'
import { OPENID_SCOPE } from '../helpers/scopes'
import { NO_STORE } from '../helpers/token-response'
import { UserInfo } from './answers'

function answer(s: AuthServices, ex: Exchange, authorization: string): void {
  const { record } = liveBearer(s.tokens, authorization)
  if (!record.scopes.includes(OPENID_SCOPE)) throw insufficientScope(OPENID_SCOPE)
  const user = record.sub === undefined ? undefined : s.oauth.users.find(record.sub)
  if (user === undefined) throw invalidToken('the access token belongs to no user')
  // tenants: where the user may ask for a token (the account page lists them); the roles stay the admin API's.
  const tenants = Object.keys(user.tenants).sort()
  ex.json(200, JSON.stringify({ sub: user.id, preferred_username: user.username, email: user.email, email_verified: user.email_verified === true, tenants }), NO_STORE)
}

export const userinfoGet: OAuthMethod = {
  body: 'none',
  authenticates: 'bearer',
  answers: { 200: UserInfo },
  errors: ['forbidden'],
  summary: 'Claims about the signed-in user (OpenID Connect UserInfo)',
  handle(s, ex) {
    answer(s, ex, ex.headers.authorization)
  },
}

/** The body is optional (a Bearer header is enough), so it is read here rather than by the dispatcher. */
export const userinfoPost: OAuthMethod = {
  body: 'none',
  authenticates: 'bearer',
  answers: { 200: UserInfo },
  errors: ['bad_request', 'forbidden', 'unsupported_media_type'],
  summary: 'Claims about the signed-in user (OpenID Connect UserInfo)',
  handle(s, ex) {
    if (ex.headers['content-type'] === '' && (ex.headers['content-length'] === '' || ex.headers['content-length'] === '0')) {
      answer(s, ex, ex.headers.authorization)
      return
    }
    requireMediaType(ex.headers['content-type'], 'form')
    readBody(ex.res, s.maxBody, ex.headers['content-length'], (body) => {
      try {
        const form = new URLSearchParams(body.toString('utf8'))
        const token = form.get('access_token')
        if (token !== null && ex.headers.authorization !== '') throw invalidRequest('send the access token once: header or body')
        answer(s, ex, token === null ? ex.headers.authorization : `Bearer ${token}`)
      } catch (err) {
        ex.error(err)
      }
    }, (err: ApiError) => ex.error(err, { closeConnection: true }))
  },
}
