// Remembers, in memory only, that a client's human-chosen secret was checked
// with scrypt, so the client's next requests skip the pool (and so never wait
// behind someone else's password checks, nor under a flood of wrong guesses
// at its secret). Kept as an HMAC under a key made at start, tied to the
// stored hash's salt (a new secret forgets it) and for TTL_MS.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { now } from '../../core/clock'

const TTL_MS = 15 * 60_000
const MAX_ENTRIES = 10_000

interface Entry {
  salt: string
  mac: Buffer
  until: number
}

export class VerifiedSecrets {
  private readonly key = randomBytes(32)
  private readonly entries = new Map<string, Entry>()

  private mac(clientId: string, secret: string): Buffer {
    return createHmac('sha256', this.key).update(clientId).update('\0').update(secret).digest()
  }

  /** Whether `secret` was verified against the hash with this salt within TTL_MS. */
  has(clientId: string, salt: string, secret: string): boolean {
    const e = this.entries.get(clientId)
    if (e === undefined) return false
    if (e.salt !== salt || now() >= e.until) {
      this.entries.delete(clientId)
      return false
    }
    return timingSafeEqual(e.mac, this.mac(clientId, secret))
  }

  remember(clientId: string, salt: string, secret: string): void {
    if (this.entries.size >= MAX_ENTRIES && !this.entries.has(clientId)) this.entries.clear()
    this.entries.set(clientId, { salt, mac: this.mac(clientId, secret), until: now() + TTL_MS })
  }
}
