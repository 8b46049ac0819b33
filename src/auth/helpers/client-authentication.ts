// Client authentication at /token and /revoke: HTTP Basic (recommended) or
// client_id/client_secret in the form body. Server-generated secrets are
// checked with SHA-256 (never near the pool), human-chosen ones with scrypt
// in the pool: after the attempt limiter, unless the same secret was
// verified recently (verified-secrets.ts), so a client that knows its
// secret does not wait behind anyone's password checks.
import { ApiError } from '../../core/errors'
import { audit } from '../../telemetry/log'
import type { AttemptLimiter } from './attempt-limiter'
import type { ClientRecord } from '../models/auth-store'
import type { Clients } from '../models/clients'
import { nameTooLong } from '../../model/name-limit'
import { invalidRequest } from './oauth-errors'
import type { PasswordHasher, ScryptHash } from './password-hasher'
import { equalHashes, sha256 } from './secrets'
import type { VerifiedSecrets } from './verified-secrets'

/** What checking a human-chosen client secret needs besides the request. */
export interface SecretChecks {
  hasher: PasswordHasher
  limiter: AttemptLimiter
  verified: VerifiedSecrets
}

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

/**
 * A failed client authentication, audited (`client_auth.failure`: the
 * client id presented, why, and from where; never the secret), as the error
 * to throw.
 */
function clientFailure(clientId: string, reason: 'unknown_client' | 'no_secret' | 'wrong_secret' | 'public_client', source: () => string, error: ApiError): ApiError {
  audit('client_auth.failure', { client: clientId }, { reason, source: source(), unknownClient: reason === 'unknown_client' ? true : undefined })
  return error
}

/** A client_id no client can have is a bad request, never a key lookup. */
function boundedClientId(clientId: string): string {
  const long = nameTooLong('client_id', clientId)
  if (long !== undefined) throw invalidRequest(long)
  return clientId
}

/** application/x-www-form-urlencoded decoding; most ids and secrets have nothing to decode. */
function formDecoded(text: string): string {
  return /[%+]/.test(text) ? decodeURIComponent(text.replace(/\+/g, ' ')) : text
}

/** RFC 6749 2.3.1: Basic credentials are form-urlencoded before base64. */
export function presentedCredentials(authorization: string, form: URLSearchParams): PresentedCredentials | undefined {
  const bodyId = form.get('client_id')
  if (authorization.slice(0, 6).toLowerCase() === 'basic ') {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon === -1) throw invalidClient('malformed Basic credentials', true)
    let clientId: string
    let clientSecret: string
    try {
      clientId = formDecoded(decoded.slice(0, colon))
      clientSecret = formDecoded(decoded.slice(colon + 1))
    } catch {
      throw invalidClient('malformed Basic credentials', true)
    }
    if (bodyId !== null && bodyId !== clientId) throw invalidRequest('client_id in the body differs from the Basic credentials')
    if (form.has('client_secret')) throw invalidRequest('use one client authentication method, not Basic and client_secret together')
    return { clientId: boundedClientId(clientId), clientSecret, via: 'basic' }
  }
  if (bodyId === null || bodyId === '') return undefined
  return { clientId: boundedClientId(bodyId), clientSecret: form.get('client_secret') ?? undefined, via: 'body' }
}

async function scryptSecretMatches(checks: SecretChecks, clientId: string, presented: string, stored: ScryptHash, source: () => string): Promise<boolean> {
  if (checks.verified.has(clientId, stored.salt, presented)) return true
  const account = `client:${clientId}`
  const admission = checks.limiter.admit(source(), account, true)
  let good: boolean
  try {
    good = await checks.hasher.verify(presented, stored, account)
  } catch (err) {
    admission.end(false)
    throw err
  }
  admission.end(!good)
  if (good) checks.verified.remember(clientId, stored.salt, presented)
  return good
}

/**
 * `source`: the caller's address (src/net/client-source.ts), for the attempt
 * limiter; read only when a scrypt check needs it (reading the socket's
 * address costs a server-generated secret's check several times over).
 */
export async function authenticateClient(
  clients: Clients, checks: SecretChecks, creds: PresentedCredentials, source: () => string,
): Promise<ClientRecord> {
  const basic = creds.via === 'basic'
  const client = clients.find(creds.clientId)
  // Built only on failure: an error captures a stack trace, too dear for every /token call.
  const failure = (): ApiError => invalidClient('client authentication failed', basic)
  if (client === undefined) throw clientFailure(creds.clientId, 'unknown_client', source, failure())
  if (client.secret === undefined) throw clientFailure(creds.clientId, 'public_client', source, failure())
  if (creds.clientSecret === undefined) throw clientFailure(creds.clientId, 'no_secret', source, failure())
  const secret = client.secret
  const good = secret.alg === 'sha256'
    ? equalHashes(sha256(creds.clientSecret), secret.hash)
    : await scryptSecretMatches(checks, client.client_id, creds.clientSecret, secret, source)
  if (!good) throw clientFailure(creds.clientId, 'wrong_secret', source, failure())
  return client
}

export interface CallingClient<C = ClientRecord> {
  client: C
  /** true only when a secret was given and checked */
  authenticated: boolean
}

/**
 * The client of a /token or /revoke call: authenticated by its secret, or a
 * public client named by client_id alone. A confidential client must
 * authenticate.
 */
export async function tokenClient(
  clients: Clients, checks: SecretChecks, authorization: string, form: URLSearchParams, source: () => string,
): Promise<CallingClient> {
  const calling = await passwordGrantClient(clients, checks, authorization, form, source)
  if (calling.client === undefined) throw invalidClient('client authentication is required (HTTP Basic or client_id and client_secret)', false)
  if (!calling.authenticated && calling.client.secret !== undefined) {
    throw clientFailure(calling.client.client_id, 'no_secret', source, invalidClient(`client "${calling.client.client_id}" is confidential: authenticate with its secret`, false))
  }
  return { client: calling.client, authenticated: calling.authenticated }
}

/**
 * The password grant's table (spec 5.2): no client_id and no secret -> no
 * client; client_id alone -> the client is named in the token but not
 * trusted; client_id and secret -> authenticated (a wrong secret fails).
 */
export async function passwordGrantClient(
  clients: Clients, checks: SecretChecks, authorization: string, form: URLSearchParams, source: () => string,
): Promise<CallingClient<ClientRecord | undefined>> {
  const creds = presentedCredentials(authorization, form)
  if (creds === undefined) return { client: undefined, authenticated: false }
  if (creds.clientSecret !== undefined) return { client: await authenticateClient(clients, checks, creds, source), authenticated: true }
  const client = clients.find(creds.clientId)
  if (client === undefined) throw clientFailure(creds.clientId, 'unknown_client', source, invalidClient('client authentication failed', false))
  return { client, authenticated: false }
}
