// Server-rendered pages of the authorization service (sign-in, errors,
// signed out, the account page): no external assets, one inline style
// allowed by a CSP nonce, no scripts but the account page's own (the same
// nonce), never framed, never cached.
import { randomBytes } from 'node:crypto'
import type { ApiError } from '../../core/errors'
import type { Exchange, ResponseHeaders } from '../../http/exchange'
import { oauthErrorAnswered } from '../../telemetry/metrics'

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:24rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
body.popup main{margin:0 auto;box-shadow:none}
h1{font-size:1.5rem;margin:0 0 .25rem}
p{margin:.25rem 0 1rem;color:#374151}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{width:100%;padding:.5rem;border:1px solid #9ca3af;border-radius:.25rem;font:inherit}
button{margin-top:1.25rem;width:100%;padding:.6rem;border:0;border-radius:.25rem;background:#1d4ed8;color:#fff;font:inherit;font-weight:600;cursor:pointer}
.error{padding:.5rem .75rem;border-radius:.25rem;background:#fee2e2;color:#991b1b}
`

export interface Page {
  title: string
  /** already escaped HTML */
  body: string
  bodyClass?: string
  /**
   * The page's form posts to this server, whose answer redirects to a client
   * (its redirect URI or post_logout_redirect_uri). Browsers check CSP
   * form-action at every hop of a form's redirect chain, and a client may
   * redirect on to any origin (a broker such as a second instance of this
   * server, Keycloak or Auth0 redirects to its own client), so such a page
   * has no form-action: its form is guarded by its token and the Origin
   * check instead. Other pages allow posting to 'self' only.
   */
  formLeavesOrigin?: boolean
  /**
   * The page's own script (the account page), allowed by the same nonce.
   * With it the page may call this server (connect-src 'self') and may not
   * turn strings into HTML (Trusted Types): it writes text only.
   */
  script?: string
  /** styles beside the common ones (and after them) */
  style?: string
  /** the main element's class */
  mainClass?: string
}

export function renderPage(page: Page): { html: string; headers: ResponseHeaders } {
  const nonce = randomBytes(16).toString('base64')
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(page.title)}</title>
<style nonce="${nonce}">${STYLE}${page.style ?? ''}</style>
</head>
<body class="${escapeHtml(page.bodyClass ?? 'page')}">
<main${page.mainClass === undefined ? '' : ` class="${escapeHtml(page.mainClass)}"`}>
${page.body}
</main>${page.script === undefined ? '' : `\n<script nonce="${nonce}">${page.script}</script>`}
</body>
</html>
`
  return {
    html,
    headers: {
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}';${page.script === undefined ? '' : ` script-src 'nonce-${nonce}'; connect-src 'self'; require-trusted-types-for 'script';`}${page.formLeavesOrigin === true ? '' : " form-action 'self';"} frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      // same-origin: the form post keeps its Origin header (no-referrer would make it "null"), nothing leaks to other sites
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
      pragma: 'no-cache',
    },
  }
}

export function sendPage(ex: Exchange, status: number, page: Page, extra: ResponseHeaders = {}): void {
  const { html, headers } = renderPage(page)
  ex.send(status, 'text/html; charset=utf-8', html, { ...headers, ...extra })
}

/** Whether the caller is a browser (wants HTML) rather than a program (gets the JSON error body). */
export function wantsHtml(accept: string): boolean {
  return accept.includes('text/html')
}

/** An error page (a browser) or the JSON error body (a program). */
export function sendErrorPage(ex: Exchange, err: ApiError): void {
  if (!wantsHtml(ex.headers.accept)) {
    ex.error(err)
    return
  }
  if (err.oauth !== undefined) oauthErrorAnswered(err.oauth.error)
  sendPage(ex, err.status, {
    title: 'Request not accepted',
    body: `<h1>Request not accepted</h1>\n<p class="error" role="alert">${escapeHtml(err.message)}</p>`,
  }, err.headers)
}
