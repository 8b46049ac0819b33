// The confirmation page of /end_session: a sign-out that does not come with
// a valid id_token_hint (any page can link to /end_session) is only done when
// the user presses the button. The form's token is derived from the session
// cookie, which another site can neither read nor send along a cross-site
// POST (SameSite=Lax), and the POST must come from our own origin.
import { createHash } from 'node:crypto'
import type { Exchange } from '../../http/exchange'
import { escapeHtml, sendPage } from './html'
import { equalHashes } from './secrets'

/** The form token for the session whose cookie is `cookie`. */
export function signOutToken(cookie: string): string {
  return createHash('sha256').update(`end_session\0${cookie}`).digest('base64url')
}

/** Whether a confirming POST comes from our own form for this session. */
export function signOutConfirmed(ex: Exchange, cookie: string, formToken: string | undefined, publicOrigin: string): boolean {
  const origin = ex.headers.origin
  if (origin !== '' && origin !== publicOrigin) return false
  return formToken !== undefined && equalHashes(signOutToken(cookie), formToken)
}

export interface SignOutForm {
  action: string
  clientId: string
  cookie: string
  target: string | undefined
  state: string | undefined
}

export function sendSignOutPage(ex: Exchange, form: SignOutForm): void {
  const fields: [string, string | undefined][] = [
    ['client_id', form.clientId], ['post_logout_redirect_uri', form.target], ['state', form.state], ['confirm', signOutToken(form.cookie)],
  ]
  const hidden = fields
    .filter((f): f is [string, string] => f[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n')
  const body = `<h1>Sign out?</h1>
<p><strong>${escapeHtml(form.clientId)}</strong> asks to end your sign-in session.</p>
<form method="post" action="${escapeHtml(form.action)}">
${hidden}
<button type="submit" id="sign-out">Sign out</button>
</form>`
  sendPage(ex, 200, { title: 'Sign out', body, formLeavesOrigin: form.target !== undefined })
}
