// GET /oauth2/v1/idp/{id}/callback: the upstream identity provider sends the
// browser back here. The state is taken (once) with the authorization
// request it stands for; the code is exchanged, the ID token verified, the
// upstream subject linked to its local user, and the original request then
// finishes as after a local sign-in (a session, the same scope and tenant
// rules, errors to the client's redirect URI: access_denied when the
// upstream or its answer refuses the user, server_error when it fails).
import { ApiError } from '../../core/errors'
import { audit } from '../../telemetry/log'
import type { Exchange } from '../../http/exchange'
import { oauthMethod, type AuthServices } from '../services'
import { IdParams } from './admin/common'
import { grantAndRedirect, sessionCookies, settleAuthorization } from './authorize/endpoint'
import { RedirectError } from './authorize/request'
import { validateAuthorizationRequest } from './authorize/validate'
import { isCustomProvider } from './authorize/upstream'
import { sameBrowser } from '../federation/browser-binding'
import { IdTokenRefused, verifyUpstreamIdToken } from '../federation/id-token'
import { LinkRefused, linkedUser } from '../federation/link-user'
import { exchangeCode } from '../federation/token-exchange'
import { UpstreamError } from '../federation/upstream-http'
import { Redirect } from './answers'

/** Upstream errors (OIDC Core 3.1.2.6) that mean the user was not let in, rather than a failure. */
const REFUSALS = new Set(['access_denied', 'login_required', 'consent_required', 'interaction_required', 'account_selection_required'])

async function finish(s: AuthServices, ex: Exchange, providerId: string, cookies: string[]): Promise<void> {
  const fed = s.oauth.federation
  const state = ex.query.get('state') ?? ''
  const pending = state === '' ? undefined : await fed.states.take(state)
  if (pending === undefined || pending.provider !== providerId) {
    throw new ApiError('bad_request', `this sign-in through identity provider "${providerId}" is unknown, expired or already finished: start again from the application`)
  }
  if (!sameBrowser(ex.headers.cookie, pending.browser)) {
    throw new ApiError('bad_request', `this sign-in through identity provider "${providerId}" was started in another browser: start again from the application`)
  }
  const req = validateAuthorizationRequest(s.oauth.clients, ex, new URLSearchParams(pending.params), isCustomProvider(s))
  const provider = fed.providers.find(providerId)
  if (provider === undefined) throw new RedirectError(req, 'access_denied', `identity provider "${providerId}" was removed during the sign-in`)
  const upstreamError = ex.query.get('error')
  if (upstreamError !== null) {
    audit('sign_in.failure', { client: req.client.client_id }, { provider: providerId, reason: `upstream ${upstreamError}` })
    const description = ex.query.get('error_description')
    throw new RedirectError(req, REFUSALS.has(upstreamError) ? 'access_denied' : 'server_error',
      `identity provider "${providerId}" answered ${upstreamError}${description === null ? '' : `: ${description}`}`)
  }
  const code = ex.query.get('code')
  if (code === null || code === '') throw new RedirectError(req, 'server_error', `identity provider "${providerId}" answered without a code`)
  try {
    const meta = await fed.discovery.metadata(provider.issuer)
    const idToken = await exchangeCode(fed, s.oauth.issuer, provider, meta, code, pending.codeVerifier)
    const claims = await verifyUpstreamIdToken(fed, provider, meta, idToken, pending.nonce)
    const user = await linkedUser(fed, s.oauth.users, provider, claims)
    audit('sign_in.success', { client: req.client.client_id, subject: user.id }, { provider: providerId })
    const { cookie, record } = await s.oauth.sessions.create(user.id, req.client.client_id)
    cookies.push(...sessionCookies(s, cookie))
    await grantAndRedirect(s, ex, req, { user, authTime: record.authTime }, cookies, false)
  } catch (err) {
    if (err instanceof UpstreamError) {
      // The client learns what failed; the log also where and how (err.detail).
      audit('sign_in.failure', { client: req.client.client_id }, { provider: providerId, reason: `${err.message}: ${err.detail}` })
      throw new RedirectError(req, 'server_error', `identity provider "${providerId}" failed: ${err.message}`)
    }
    if (err instanceof IdTokenRefused || err instanceof LinkRefused) {
      audit('sign_in.failure', { client: req.client.client_id }, { provider: providerId, reason: err.message })
    }
    if (err instanceof IdTokenRefused || err instanceof LinkRefused) throw new RedirectError(req, 'access_denied', err.message)
    throw err
  }
}

export const idpCallbackEndpoint = oauthMethod({
  body: 'none',
  params: IdParams,
  answers: { 302: Redirect },
  errors: ['element_not_found', 'forbidden'],
  errorPages: true,
  summary: 'Where an upstream identity provider returns the browser (federated sign-in)',
  handle(s, ex, { params: { id } }) {
    settleAuthorization(s, ex, (cookies) => finish(s, ex, id, cookies))
  },
})
