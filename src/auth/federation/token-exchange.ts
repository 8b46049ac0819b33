// The second leg: the code from the callback exchanged at the upstream's
// token endpoint (client_secret_basic, or the client id alone for a public
// client; the PKCE verifier either way) for its ID token.
import type { IdentityProviderRecord } from '../models/identity-providers'
import type { UpstreamMetadata } from './discovery'
import { callbackUrl, type Federation } from './federation'
import { UpstreamError, upstreamJson } from './upstream-http'

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
  const { status, json } = await upstreamJson(meta.token_endpoint, { method: 'POST', headers, body: form.toString() })
  if (status !== 200) {
    const why = typeof json.error === 'string' ? `${json.error}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}` : `status ${status}`
    throw new UpstreamError(`the token endpoint of identity provider "${provider.id}" refused the code (${why})`)
  }
  if (typeof json.id_token !== 'string') throw new UpstreamError(`the token endpoint of identity provider "${provider.id}" returned no id_token`)
  return json.id_token
}
