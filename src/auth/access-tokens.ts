// Opaque access tokens: 256 random bits handed to the client, only their
// SHA-256 stored. Verified tokens are cached in memory by their hash; a
// revocation (later: /revoke) must go through `revoke` so the cache forgets.
import { now } from '../clock'
import type { AccessTokenRecord, AuthStore } from './auth-store'
import { randomToken, sha256 } from './secrets'

const CACHE_LIMIT = 100_000

export class AccessTokens {
  private readonly cache = new Map<string, AccessTokenRecord>()

  constructor(private readonly store: AuthStore, private readonly ttlSeconds: number) {}

  get ttl(): number {
    return this.ttlSeconds
  }

  /** Stores the token durably before it is handed out. */
  async issue(fields: Omit<AccessTokenRecord, 'exp'>): Promise<{ token: string; record: AccessTokenRecord }> {
    const token = randomToken()
    const record: AccessTokenRecord = { ...fields, exp: now() + this.ttlSeconds * 1000 }
    await this.store.accessTokens.put(sha256(token), record)
    await this.store.env.flushed
    return { token, record }
  }

  /** The live record of a token, or undefined when unknown, revoked or expired. */
  verify(token: string): AccessTokenRecord | undefined {
    const hash = sha256(token)
    let record = this.cache.get(hash)
    if (record === undefined) {
      record = this.store.accessTokens.get(hash)
      if (record === undefined) return undefined
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear()
      this.cache.set(hash, record)
    }
    if (record.exp <= now()) {
      this.cache.delete(hash)
      return undefined
    }
    return record
  }

  async revoke(token: string): Promise<boolean> {
    const hash = sha256(token)
    this.cache.delete(hash)
    const removed = await this.store.accessTokens.remove(hash)
    await this.store.env.flushed
    return removed
  }

  /** Deletes expired tokens; run periodically. */
  async sweep(): Promise<number> {
    const t = now()
    const expired = [...this.store.accessTokens.getRange()].filter(({ value }) => value.exp <= t).map(({ key }) => key)
    for (const key of expired) {
      this.cache.delete(key)
      void this.store.accessTokens.remove(key)
    }
    await this.store.env.flushed
    return expired.length
  }
}
