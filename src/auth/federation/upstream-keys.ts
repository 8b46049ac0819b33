// The upstream's signing keys (its JWKS), cached per jwks_uri. A token
// signed with a `kid` the cache does not know makes one fresh fetch (the
// upstream rotated its keys), at most once per REFETCH_MS so that forged
// kids cannot make us hammer the upstream.
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyOptions } from 'jose'
import { now } from '../../core/clock'
import { NOT_ACCEPTED, UpstreamError, upstreamJson } from './upstream-http'

const REFETCH_MS = 10_000
const WHAT = 'its key set'

interface CachedSet {
  set: ReturnType<typeof createLocalJWKSet>
  at: number
}

export class UpstreamKeys {
  private readonly cache = new Map<string, CachedSet>()

  private async fetch(jwksUri: string): Promise<CachedSet> {
    const { status, json } = await upstreamJson(jwksUri, WHAT)
    if (status !== 200 || !Array.isArray(json.keys)) throw new UpstreamError(`${WHAT} ${NOT_ACCEPTED}`, `${jwksUri} answered ${status} without a key set`)
    const cached = { set: createLocalJWKSet(json as unknown as JSONWebKeySet), at: now() }
    this.cache.set(jwksUri, cached)
    return cached
  }

  /** The verified claims; jose's errors (signature, claims) are thrown as they are. */
  async verify(token: string, jwksUri: string, options: JWTVerifyOptions): Promise<JWTPayload> {
    let cached = this.cache.get(jwksUri) ?? await this.fetch(jwksUri)
    try {
      return (await jwtVerify(token, cached.set, options)).payload
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || now() - cached.at < REFETCH_MS) throw err
    }
    cached = await this.fetch(jwksUri)
    return (await jwtVerify(token, cached.set, options)).payload
  }
}
