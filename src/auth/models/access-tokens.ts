// Opaque access tokens: their issue time and 256 random bits handed to the
// client, stored under their key (tokenKey: the issue time and the token's
// SHA-256; the token itself is never stored). The key is called `hash` below
// and wherever it is kept (a refresh token's access tokens, the expiry
// index). Verified tokens are cached in memory by their key; every
// revocation goes through `revoke`/`revokeHash` so the cache forgets at once.
// The key of a presented token is remembered too (token-hashes.ts).
// An index by expiry lets the sweep read only the tokens that have expired.
import { durable } from './auth-store'
import { now } from '../../core/clock'
import type { AccessTokenRecord, AuthStore, GrantFields } from './auth-store'
import { timedToken, tokenKey } from '../helpers/secrets'
import { TokenHashes } from './token-hashes'

const CACHE_LIMIT = 100_000

export interface MintedToken<R> {
  token: string
  hash: string
  record: R
}

export class AccessTokens {
  private readonly cache = new Map<string, AccessTokenRecord>()
  /** Hashes removed and not yet durable (see verifyHash). */
  private readonly removing = new Set<string>()
  private readonly hashes: TokenHashes

  /** `hash`: the storage key of a token (tokenKey); a test passes a counting one. */
  constructor(private readonly store: AuthStore, private readonly ttlSeconds: number, private readonly hash: (token: string) => string = tokenKey) {
    this.hashes = new TokenHashes(hash)
    indexTokensOfEarlierBuilds(store)
  }

  get ttl(): number {
    return this.ttlSeconds
  }

  /** A new token and its record, not yet stored (see `put`). */
  mint(fields: GrantFields & { refresh?: string }): MintedToken<AccessTokenRecord> {
    const t = now()
    const token = timedToken(t)
    const record: AccessTokenRecord = { clientAuthenticated: true, ...fields, iat: t, exp: t + this.ttlSeconds * 1000 }
    return { token, hash: this.hash(token), record }
  }

  /** Stores a minted token (inside or outside a transaction). */
  put(minted: MintedToken<AccessTokenRecord>): void {
    void this.store.accessTokens.put(minted.hash, minted.record)
    void this.store.accessTokenExpiry.put([minted.record.exp, minted.hash], 1)
  }

  /** Stores the token durably before it is handed out. */
  async issue(fields: GrantFields & { refresh?: string }): Promise<{ token: string; record: AccessTokenRecord }> {
    const minted = this.mint(fields)
    this.put(minted)
    await durable(this.store)
    return { token: minted.token, record: minted.record }
  }

  /** The key a token is stored under (remembered for tokens presented again). */
  keyOf(token: string): string {
    return this.hashes.of(token)
  }

  /** The live record of a token, or undefined when unknown, revoked or expired. */
  verify(token: string): AccessTokenRecord | undefined {
    return this.verifyHash(this.keyOf(token))
  }

  verifyHash(hash: string): AccessTokenRecord | undefined {
    // Removed but not yet committed: the store still returns it, so it must not be read (or cached) again.
    if (this.removing.has(hash)) return undefined
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

  /** Forgets every cached record (cluster mode: a host that gains the auth store may hold records revoked since). */
  forget(): void {
    this.cache.clear()
  }

  async revoke(token: string): Promise<boolean> {
    return this.revokeHash(this.keyOf(token))
  }

  async revokeHash(hash: string): Promise<boolean> {
    const record = this.store.accessTokens.get(hash)
    if (record === undefined) return false
    this.remove(hash, record.exp)
    await this.committed([hash])
    return true
  }

  private remove(hash: string, exp: number): void {
    this.cache.delete(hash)
    this.removing.add(hash)
    void this.store.accessTokens.remove(hash)
    void this.store.accessTokenExpiry.remove([exp, hash])
  }

  /** Waits until the removals are durable; until then verifyHash refuses them (a read would still find them). */
  private async committed(hashes: readonly string[]): Promise<void> {
    try {
      await durable(this.store)
    } finally {
      for (const hash of hashes) {
        this.removing.delete(hash)
        this.cache.delete(hash)
      }
    }
  }

  /** Revokes every token matching `which` (a scan: for admin deletions, not the data path). */
  async revokeWhere(which: (r: AccessTokenRecord) => boolean): Promise<number> {
    const found = [...this.store.accessTokens.getRange()].filter(({ value }) => which(value))
    for (const { key, value } of found) this.remove(key, value.exp)
    await this.committed(found.map(({ key }) => key))
    return found.length
  }

  /** Deletes expired tokens, reading only those (the expiry index); run periodically. */
  async sweep(): Promise<number> {
    const expired = [...this.store.accessTokenExpiry.getKeys({ end: [now() + 1] })] as [number, string][]
    for (const [exp, hash] of expired) this.remove(hash, exp)
    await this.committed(expired.map(([, hash]) => hash))
    return expired.length
  }
}

/** Tokens stored before the expiry index existed get their entries once, at start. */
function indexTokensOfEarlierBuilds(store: AuthStore): void {
  if (store.accessTokenExpiry.getKeysCount({ limit: 1 }) > 0) return
  for (const { key, value } of store.accessTokens.getRange()) void store.accessTokenExpiry.put([value.exp, key], 1)
}
