// GET /oauth2/v1/end_session?client_id=...: ends the browser's sign-in
// session when that client signed in through it (the cookie is cleared);
// ID tokens already issued stay valid until they expire. With
// post_logout_redirect_uri (which must be one of the client's registered
// redirect URIs, exactly) the browser is sent there with `state`; otherwise
// a signed-out page (or 204 for a program).
import { ApiError } from '../errors'
import type { ResponseHeaders } from '../front/exchange'
import { redirect } from './authorize/respond'
import { readCookie, setCookie } from './cookies'
import { sendPage, wantsHtml } from './html'
import { nameTooLong } from './name-limit'
import { single } from './oauth-errors'
import type { OAuthMethod } from './route-types'
import { SESSION_COOKIE } from './sessions'

const badRequest = (message: string): ApiError => new ApiError('bad_request', message, { oauth: { error: 'invalid_request', error_description: message } })

export const endSessionEndpoint: OAuthMethod = {
  body: 'none',
  handle(s, ex) {
    const query = ex.query
    const clientId = single(query, 'client_id')
    if (clientId === undefined || clientId === '') throw badRequest('client_id is required')
    const long = nameTooLong('client_id', clientId)
    if (long !== undefined) throw badRequest(long)
    const client = s.authStore.clients.get(clientId)
    if (client === undefined) throw badRequest(`unknown client_id "${clientId}"`)
    const target = single(query, 'post_logout_redirect_uri')
    if (target !== undefined && !client.redirect_uris.includes(target)) {
      throw badRequest(`post_logout_redirect_uri "${target}" is not registered for client "${clientId}"`)
    }
    const state = single(query, 'state')
    const session = s.oauth.sessions.find(readCookie(ex.headers.cookie, SESSION_COOKIE))
    const ending = session !== undefined && session.record.clients.includes(clientId)
    const finish = (): void => {
      const cookies: ResponseHeaders = ending ? { 'set-cookie': setCookie(SESSION_COOKIE, '', { secure: s.oauth.secureCookies, sameSite: 'Lax', maxAge: 0 }) } : {}
      if (target !== undefined) {
        redirect(ex, state === undefined ? target : `${target}${target.includes('?') ? '&' : '?'}${new URLSearchParams({ state }).toString()}`, cookies)
      } else if (wantsHtml(ex.headers.accept)) {
        sendPage(ex, 200, { title: 'Signed out', body: '<h1>Signed out</h1>\n<p>You are signed out. You can close this window.</p>' }, cookies)
      } else {
        ex.empty(204, { 'cache-control': 'no-store', ...cookies })
      }
    }
    if (!ending) {
      finish()
      return
    }
    s.oauth.sessions.end(session).then(finish, (err: unknown) => ex.error(err))
  },
}
