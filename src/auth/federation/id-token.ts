// The upstream ID token, verified before anything is believed: signature
// (the upstream's published keys), issuer, audience (our client id; with
// several audiences, azp must be us), expiry and issue time (a minute of
// clock margin), and the nonce we sent.
import type { JWTPayload } from 'jose'
import { now } from '../../core/clock'
import type { IdentityProviderRecord } from '../models/identity-providers'
import type { UpstreamMetadata } from './discovery'
import type { Federation } from './federation'
import { UpstreamError } from './upstream-http'

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

export class IdTokenRefused extends Error {}

export async function verifyUpstreamIdToken(
  fed: Federation, provider: IdentityProviderRecord, meta: UpstreamMetadata, idToken: string, nonce: string,
): Promise<JWTPayload & { sub: string }> {
  let claims: JWTPayload
  try {
    claims = await fed.keys.verify(idToken, meta.jwks_uri, {
      issuer: provider.issuer, audience: provider.client_id, algorithms: ALGORITHMS,
      clockTolerance: 60, currentDate: new Date(now()), requiredClaims: ['sub', 'exp', 'iat'],
    })
  } catch (err) {
    if (err instanceof UpstreamError) throw err
    throw new IdTokenRefused(`the ID token of identity provider "${provider.id}" is not valid: ${(err as Error).message}`)
  }
  if (claims.nonce !== nonce) throw new IdTokenRefused(`the ID token of identity provider "${provider.id}" carries another nonce than the one sent`)
  if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== provider.client_id) {
    throw new IdTokenRefused(`the ID token of identity provider "${provider.id}" has several audiences and another azp`)
  }
  return claims as JWTPayload & { sub: string }
}
