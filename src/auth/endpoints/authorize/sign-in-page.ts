// The sign-in page of /authorize: a form posting the authorization
// parameters back to /authorize with the username, the password and a CSRF
// token. The token is also set in an HttpOnly, SameSite=Strict cookie
// (double submit); the POST must carry both, equal, and an Origin (when the
// browser sends one) of this server.
import { randomToken, equalHashes } from '../../helpers/secrets'
import { readCookie, setCookie } from '../../helpers/cookies'
import { escapeHtml, sendPage } from '../../helpers/html'
import { MAX_NAME_CHARS } from '../../../model/name-limit'
import type { Exchange } from '../../../http/exchange'
import type { AuthorizationRequest } from './request'

export const CSRF_COOKIE = 'platform_csrf'
const CSRF_TTL_SECONDS = 30 * 60
const TOKEN = /^[A-Za-z0-9_-]{43}$/

export interface SignInView {
  status: number
  error?: string
  username?: string
}

/** The CSRF token of the browser's cookie, or a new one. */
export function csrfToken(ex: Exchange): string {
  const existing = readCookie(ex.headers.cookie, CSRF_COOKIE)
  return existing !== undefined && TOKEN.test(existing) ? existing : randomToken()
}

export function csrfCookie(token: string, secure: boolean): string {
  return setCookie(CSRF_COOKIE, token, { secure, sameSite: 'Strict', maxAge: CSRF_TTL_SECONDS })
}

/** Whether a sign-in POST comes from our own form. */
export function csrfValid(ex: Exchange, formToken: string | null, publicOrigin: string): boolean {
  const origin = ex.headers.origin
  if (origin !== '' && origin !== publicOrigin) return false
  const cookie = readCookie(ex.headers.cookie, CSRF_COOKIE)
  return cookie !== undefined && formToken !== null && TOKEN.test(cookie) && equalHashes(cookie, formToken)
}

export function sendSignInPage(ex: Exchange, req: AuthorizationRequest, action: string, secure: boolean, view: SignInView): void {
  const csrf = csrfToken(ex)
  const hidden = [...req.params]
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n')
  const error = view.error === undefined ? '' : `<p class="error" role="alert" id="error">${escapeHtml(view.error)}</p>\n`
  const legacy = req.provider === 'idp_legacy' ? ' (legacy identity provider)' : ''
  const body = `<h1>Sign in</h1>
<p>to continue to <strong>${escapeHtml(req.client.client_id)}</strong>${legacy}</p>
${error}<form method="post" action="${escapeHtml(action)}">
${hidden}
<input type="hidden" name="csrf" value="${csrf}">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" required autofocus maxlength="${MAX_NAME_CHARS}" value="${escapeHtml(view.username ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" id="submit">Sign in</button>
</form>`
  sendPage(ex, view.status, { title: 'Sign in', body, bodyClass: req.display, formLeavesOrigin: true }, {
    'set-cookie': csrfCookie(csrf, secure),
  })
}
