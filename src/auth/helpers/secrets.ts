// Random tokens and their hashes. Access tokens and server-generated client
// secrets carry 256 bits of entropy, so a plain SHA-256 is enough to store them.
import { hash, timingSafeEqual } from 'node:crypto'
import { pooledRandomBytes } from '../../crypto/random-pool'

export function randomToken(): string {
  return pooledRandomBytes(32).toString('base64url')
}

/** One-shot `hash` (Node >= 20.12): a third of createHash's cost, twice per token request. */
export function sha256(text: string): string {
  return hash('sha256', text, 'base64url')
}

/** Characters of a timed token: 6 bytes of issue time and 32 random bytes, base64url. */
const TIMED_TOKEN_LENGTH = 51

/**
 * An access token: its issue time (milliseconds, 6 bytes) before 256 random
 * bits, so that its storage key (tokenKey) sorts by issue time. The tokens of
 * one commit then share a few LMDB pages instead of dirtying one random page
 * each: SHA-256 keys wrote ~9 KB per token, and the sync of those pages
 * bounded /token.
 */
export function timedToken(ms: number): string {
  const bytes = Buffer.allocUnsafe(38)
  bytes.writeUIntBE(Math.min(Math.max(Math.floor(ms), 0), 2 ** 48 - 1), 0, 6)
  pooledRandomBytes(32).copy(bytes, 6)
  return bytes.toString('base64url')
}

/**
 * The key an access token is stored under: a timed token's issue time in hex
 * (fixed width, so keys sort by it) and then the SHA-256 of the whole token;
 * any other token (such as one issued by an earlier build), its SHA-256. The
 * token itself is never stored, and only the exact token finds its record.
 */
export function tokenKey(token: string): string {
  if (token.length !== TIMED_TOKEN_LENGTH) return sha256(token)
  return Buffer.from(token.slice(0, 8), 'base64url').toString('hex') + sha256(token)
}

export function equalHashes(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
