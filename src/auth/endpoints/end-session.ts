// GET and POST /oauth2/v1/end_session (OpenID Connect RP-Initiated Logout
// 1.0): ends the browser's sign-in session when the client signed in through
// it (the cookie is cleared); ID tokens already issued stay valid until they
// expire. A valid id_token_hint identifies the client (its `aud`; client_id
// is then optional and must agree) and, when it names the session's user,
// ends the session at once. Without one, the user confirms on a small page
// (end-session-page.ts), so a cross-site link cannot sign anyone out. With
// post_logout_redirect_uri (one of the client's registered redirect URIs,
// exactly) the browser is sent there with `state`; otherwise a signed-out
// page (or 204 for a program).
import { END_SESSION_PARAMS } from './documented-forms'
import { ApiError } from '../../core/errors'
import type { Exchange, ResponseHeaders } from '../../http/exchange'
import type { AuthServices } from '../services'
import { redirect } from './authorize/respond'
import { readCookie, setCookie } from '../helpers/cookies'
import { sendSignOutPage, signOutConfirmed } from '../helpers/end-session-page'
import { sendErrorPage, sendPage, wantsHtml } from '../helpers/html'
import { verifyLogoutHint } from '../helpers/id-tokens'
import { nameTooLong } from '../../model/name-limit'
import { single } from '../helpers/oauth-errors'
import { queryOrForm } from '../route-types'
import { SESSION_COOKIE } from '../models/sessions'
import { NO_BODY } from '../../http/route'
import { HtmlPage, Redirect } from './answers'

const badRequest = (message: string): ApiError => new ApiError('bad_request', message, { oauth: { error: 'invalid_request', error_description: message } })

/** The client asking, from the hint or client_id (which must agree when both are given). */
async function clientOf(s: AuthServices, params: URLSearchParams): Promise<{ clientId: string; hintSub: string | undefined }> {
  const hint = single(params, 'id_token_hint')
  const clientId = single(params, 'client_id')
  if (hint !== undefined && hint !== '') {
    const verified = await verifyLogoutHint(s.oauth.keys, s.oauth.issuer, hint)
    if (verified === undefined) throw badRequest('id_token_hint is not an ID token issued by this server')
    if (clientId !== undefined && clientId !== '' && clientId !== verified.clientId) {
      throw badRequest(`client_id "${clientId}" is not the audience of id_token_hint`)
    }
    return { clientId: verified.clientId, hintSub: verified.sub }
  }
  if (clientId === undefined || clientId === '') throw badRequest('client_id or id_token_hint is required')
  const long = nameTooLong('client_id', clientId)
  if (long !== undefined) throw badRequest(long)
  return { clientId, hintSub: undefined }
}

async function endSession(s: AuthServices, ex: Exchange, params: URLSearchParams): Promise<void> {
  const { clientId, hintSub } = await clientOf(s, params)
  const client = s.oauth.clients.find(clientId)
  if (client === undefined) throw badRequest(`unknown client_id "${clientId}"`)
  const target = single(params, 'post_logout_redirect_uri')
  if (target !== undefined && !client.redirect_uris.includes(target)) {
    throw badRequest(`post_logout_redirect_uri "${target}" is not registered for client "${clientId}"`)
  }
  const state = single(params, 'state')
  const cookie = readCookie(ex.headers.cookie, SESSION_COOKIE)
  const session = s.oauth.sessions.find(cookie)
  const ending = session !== undefined && session.record.clients.includes(clientId)
  if (ending && hintSub !== session.record.sub) {
    const confirm = ex.method === 'POST' ? single(params, 'confirm') : undefined
    if (confirm === undefined) {
      sendSignOutPage(ex, { action: `${s.oauth.issuer}/end_session`, clientId, cookie: cookie!, target, state })
      return
    }
    if (!signOutConfirmed(ex, cookie!, confirm, new URL(s.publicUrl).origin)) {
      throw new ApiError('forbidden', 'the sign-out form expired or was not sent from this server: start again from the application')
    }
  }
  if (ending) await s.oauth.sessions.end(session)
  const cookies: ResponseHeaders = ending ? { 'set-cookie': setCookie(SESSION_COOKIE, '', { secure: s.oauth.secureCookies, sameSite: 'Lax', maxAge: 0 }) } : {}
  if (target !== undefined) {
    redirect(ex, state === undefined ? target : `${target}${target.includes('?') ? '&' : '?'}${new URLSearchParams({ state }).toString()}`, cookies)
  } else if (wantsHtml(ex.headers.accept)) {
    sendPage(ex, 200, { title: 'Signed out', body: '<h1>Signed out</h1>\n<p>You are signed out. You can close this window.</p>' }, cookies)
  } else {
    ex.empty(204, { 'cache-control': 'no-store', ...cookies })
  }
}

function answer(s: AuthServices, ex: Exchange, params: URLSearchParams): void {
  endSession(s, ex, params).catch((err: unknown) => {
    if (err instanceof ApiError) sendErrorPage(ex, err)
    else ex.error(err)
  })
}

/** RP-Initiated Logout allows the same request as a form post; the confirmation page posts here too. */
export const endSessionEndpoint = queryOrForm(answer, 'RP-initiated logout (OpenID Connect)', END_SESSION_PARAMS, { 200: HtmlPage, 204: NO_BODY, 302: Redirect })
