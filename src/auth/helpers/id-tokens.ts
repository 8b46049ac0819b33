// OpenID Connect ID tokens: RS256 (signed in the piscina pool by the active
// key), one audience, claims iss, sub, aud, exp, iat, auth_time, nonce,
// email and email_verified (always: the spec lists email), preferred_username
// when `profile` was granted (OpenID Connect Core 5.4; a server using this
// one as its upstream provider reads the username there), and at_hash when
// an access token is issued beside it. An
// id_token_hint is verified here against the published keys (verification
// is cheap; only signing is kept off the front thread).
import { createHash } from 'node:crypto'
import { compactVerify, createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose'
import { now } from '../../core/clock'
import type { UserRecord } from '../models/auth-store'
import { PROFILE_SCOPE } from './scopes'
import type { SigningKeys } from '../models/signing-keys'

export interface IdTokenInput {
  issuer: string
  clientId: string
  user: UserRecord
  /** the granted scopes */
  scopes: readonly string[]
  nonce: string | undefined
  /** epoch ms of the sign-in */
  authTime: number
  accessToken: string
  ttlSeconds: number
}

/** OIDC Core 3.1.3.6: the left half of the SHA-256 of the access token, base64url. */
export function atHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url')
}

export function idTokenClaims(input: IdTokenInput): JWTPayload {
  const iat = Math.floor(now() / 1000)
  const claims: JWTPayload = {
    iss: input.issuer,
    sub: input.user.id,
    aud: input.clientId,
    exp: iat + input.ttlSeconds,
    iat,
    auth_time: Math.floor(input.authTime / 1000),
    email: input.user.email,
    email_verified: input.user.email_verified === true,
    at_hash: atHash(input.accessToken),
  }
  if (input.scopes.includes(PROFILE_SCOPE)) claims.preferred_username = input.user.username
  if (input.nonce !== undefined) claims.nonce = input.nonce
  return claims
}

export async function signIdToken(keys: SigningKeys, input: IdTokenInput): Promise<string> {
  return keys.sign(idTokenClaims(input))
}

/** The `sub` and sign-in time of a valid, unexpired ID token this server issued to `clientId`, or undefined. */
export async function verifyIdTokenHint(
  keys: SigningKeys, issuer: string, hint: string, clientId: string,
): Promise<{ sub: string; authTime: number } | undefined> {
  try {
    const { payload } = await jwtVerify(hint, createLocalJWKSet(keys.jwks()), {
      issuer, audience: clientId, algorithms: ['RS256'], currentDate: new Date(now()), requiredClaims: ['sub', 'exp', 'iat'],
    })
    if (typeof payload.sub !== 'string') return undefined
    const authTime = typeof payload.auth_time === 'number' ? payload.auth_time * 1000 : payload.iat! * 1000
    return { sub: payload.sub, authTime }
  } catch {
    return undefined
  }
}

/**
 * The user and client of an id_token_hint at /end_session: signed by one of
 * our published keys and issued by us. Expiry is not checked (OpenID Connect
 * RP-Initiated Logout 1.0, section 2: the OP should accept an expired ID
 * token there); the hint only names who asks to sign out, it grants nothing.
 */
export async function verifyLogoutHint(keys: SigningKeys, issuer: string, hint: string): Promise<{ sub: string; clientId: string } | undefined> {
  try {
    const { payload } = await compactVerify(hint, createLocalJWKSet(keys.jwks()), { algorithms: ['RS256'] })
    const claims = JSON.parse(new TextDecoder().decode(payload)) as JWTPayload
    const aud = Array.isArray(claims.aud) && claims.aud.length === 1 ? claims.aud[0] : claims.aud
    if (claims.iss !== issuer || typeof claims.sub !== 'string' || typeof aud !== 'string') return undefined
    return { sub: claims.sub, clientId: aud }
  } catch {
    return undefined
  }
}
