// The consent page of /authorize for prompt=consent: the user sees which
// client asks for which scopes and allows or denies. The form posts the
// authorization parameters back to /authorize with `consent` and the same
// double-submit CSRF token as the sign-in form.
import type { Exchange, ResponseHeaders } from '../../../http/exchange'
import { escapeHtml, sendPage } from '../../helpers/html'
import { csrfCookie, csrfToken } from './sign-in-page'
import type { AuthorizationRequest } from './request'

export function sendConsentPage(ex: Exchange, req: AuthorizationRequest, action: string, secure: boolean, scopes: readonly string[], cookies: readonly string[]): void {
  const csrf = csrfToken(ex)
  const hidden = [...req.params]
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n')
  const list = scopes.map((sc) => `<li>${escapeHtml(sc)}</li>`).join('\n')
  const body = `<h1>Allow access?</h1>
<p><strong>${escapeHtml(req.client.client_id)}</strong> asks for:</p>
<ul id="scopes">
${list}
</ul>
<form method="post" action="${escapeHtml(action)}">
${hidden}
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" name="consent" value="allow" id="allow">Allow</button>
<button type="submit" name="consent" value="deny" id="deny">Deny</button>
</form>`
  const headers: ResponseHeaders = { 'set-cookie': [...cookies, csrfCookie(csrf, secure)] }
  sendPage(ex, 200, { title: 'Allow access', body, bodyClass: req.display, formLeavesOrigin: true }, headers)
}
