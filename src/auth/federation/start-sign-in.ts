// The first leg of an upstream sign-in: the upstream's authorization URL
// with the code flow, PKCE (S256), and a `state` and `nonce` of our own. The
// original authorization request waits under the state's hash until the
// callback takes it (once).
import { createHash } from 'node:crypto'
import { randomToken, sha256 } from '../helpers/secrets'
import type { IdentityProviderRecord } from '../models/identity-providers'
import { callbackUrl, type Federation } from './federation'

/** `browser`: the browser's binding cookie value (sign-in-binding.ts). */
export async function upstreamAuthorizationUrl(
  fed: Federation, issuer: string, provider: IdentityProviderRecord, params: URLSearchParams, browser: string,
): Promise<string> {
  const meta = await fed.discovery.metadata(provider.issuer)
  const state = randomToken()
  const nonce = randomToken()
  const codeVerifier = randomToken()
  await fed.states.save(state, { provider: provider.id, browser: sha256(browser), nonce, codeVerifier, params: params.toString() })
  const url = new URL(meta.authorization_endpoint)
  const scopes = provider.scopes.includes('openid') ? provider.scopes : ['openid', ...provider.scopes]
  const query = {
    response_type: 'code', client_id: provider.client_id, redirect_uri: callbackUrl(issuer, provider.id), scope: scopes.join(' '),
    state, nonce, code_challenge: createHash('sha256').update(codeVerifier).digest('base64url'), code_challenge_method: 'S256',
  }
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v)
  return url.href
}
