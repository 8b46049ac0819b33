// What /authorize asks of the federation: whether platform_id_provider
// names a custom identity provider, and where to send the browser for it.
// An upstream that cannot be reached (its discovery document) is reported
// to the client as server_error, never a 500, naming the provider but not
// its addresses (the log has them).
import { log } from '../../../telemetry/log'
import type { AuthServices } from '../../services'
import type { Exchange } from '../../../http/exchange'
import { browserBinding } from '../../federation/browser-binding'
import { RedirectError, type AuthorizationRequest } from './request'
import { upstreamAuthorizationUrl } from '../../federation/start-sign-in'
import { UpstreamError } from '../../federation/upstream-http'

export const isCustomProvider = (s: AuthServices) => (id: string): boolean => s.oauth.federation.providers.exists(id)

/** The upstream's authorization URL; the browser binding cookie, when new, is added to `cookies`. */
export async function upstreamLocation(s: AuthServices, ex: Exchange, req: AuthorizationRequest, upstream: string, cookies: string[]): Promise<string> {
  const provider = s.oauth.federation.providers.find(upstream)
  if (provider === undefined) throw new RedirectError(req, 'invalid_request', `identity provider "${upstream}" no longer exists`)
  try {
    const binding = browserBinding(ex.headers.cookie, s.oauth.secureCookies)
    const url = await upstreamAuthorizationUrl(s.oauth.federation, s.oauth.issuer, provider, req.params, binding.value)
    if (binding.setCookie !== undefined) cookies.push(binding.setCookie)
    return url
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err
    log.warn(`identity provider "${provider.id}" is not available: ${err.detail}`)
    throw new RedirectError(req, 'server_error', `identity provider "${provider.id}" is not available: ${err.message}`)
  }
}
