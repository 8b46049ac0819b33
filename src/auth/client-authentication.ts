// Client authentication at /token (and later /revoke): HTTP Basic
// (recommended) or client_id/client_secret in the form body. Server-generated
// secrets are checked with SHA-256, human-chosen ones with scrypt in the pool.
import { ApiError } from '../errors'
import type { AuthStore, ClientRecord } from './auth-store'
import type { PasswordHasher } from './password-hasher'
import { equalHashes, sha256 } from './secrets'

export interface PresentedCredentials {
  clientId: string
  clientSecret: string | undefined
  via: 'basic' | 'body'
}

export const invalidClient = (description: string, basic: boolean): ApiError =>
  new ApiError('insufficient_credentials', description, {
    oauth: { error: 'invalid_client', error_description: description },
    headers: basic ? { 'www-authenticate': 'Basic realm="oauth2"' } : {},
  })

const invalidRequest = (description: string): ApiError =>
  new ApiError('bad_request', description, { oauth: { error: 'invalid_request', error_description: description } })

/** RFC 6749 2.3.1: Basic credentials are form-urlencoded before base64. */
export function presentedCredentials(authorization: string, form: URLSearchParams): PresentedCredentials | undefined {
  const bodyId = form.get('client_id')
  if (authorization.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon === -1) throw invalidClient('malformed Basic credentials', true)
    let clientId: string
    let clientSecret: string
    try {
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '))
      clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '))
    } catch {
      throw invalidClient('malformed Basic credentials', true)
    }
    if (bodyId !== null && bodyId !== clientId) throw invalidRequest('client_id in the body differs from the Basic credentials')
    if (form.has('client_secret')) throw invalidRequest('use one client authentication method, not Basic and client_secret together')
    return { clientId, clientSecret, via: 'basic' }
  }
  if (bodyId === null || bodyId === '') return undefined
  return { clientId: bodyId, clientSecret: form.get('client_secret') ?? undefined, via: 'body' }
}

export async function authenticateClient(
  store: AuthStore, hasher: PasswordHasher, creds: PresentedCredentials,
): Promise<ClientRecord> {
  const basic = creds.via === 'basic'
  const client = store.clients.get(creds.clientId)
  const failure = invalidClient('client authentication failed', basic)
  if (client === undefined || client.secret === undefined || creds.clientSecret === undefined) throw failure
  const secret = client.secret
  const good = secret.alg === 'sha256'
    ? equalHashes(sha256(creds.clientSecret), secret.hash)
    : await hasher.verify(creds.clientSecret, secret)
  if (!good) throw failure
  return client
}
