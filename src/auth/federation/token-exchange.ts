// The second leg: the code from the callback exchanged at the upstream's
// token endpoint (client_secret_basic, or the client id alone for a public
// client; the PKCE verifier either way) for its ID token.
import type { IdentityProviderRecord } from '../models/identity-providers'
import type { UpstreamMetadata } from './discovery'
import { callbackUrl, type Federation } from './federation'
import { UpstreamError, upstreamJson } from './upstream-http'

const WHAT = 'its token endpoint'

const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

export async function exchangeCode(
  fed: Federation, issuer: string, provider: IdentityProviderRecord, meta: UpstreamMetadata, code: string, codeVerifier: string,
): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callbackUrl(issuer, provider.id), code_verifier: codeVerifier })
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  const secret = fed.secretOf(provider)
  if (secret === undefined) form.set('client_id', provider.client_id)
  else headers.authorization = basic(provider.client_id, secret)
  const { status, json } = await upstreamJson(meta.token_endpoint, WHAT, { method: 'POST', headers, body: form.toString() })
  if (status !== 200) {
    // The OAuth error code is for the client; the upstream's own description only for the log.
    const code = typeof json.error === 'string' && /^[\x20-\x7e]{1,64}$/.test(json.error) ? json.error : `status ${status}`
    const described = typeof json.error_description === 'string' ? `: ${json.error_description}` : ''
    throw new UpstreamError(`${WHAT} refused the code (${code})`, `${meta.token_endpoint} refused the code: ${status} ${code}${described}`)
  }
  if (typeof json.id_token !== 'string') throw new UpstreamError(`${WHAT} returned no id_token`, `${meta.token_endpoint} returned no id_token`)
  return json.id_token
}
