// Refresh tokens: 256 random bits, stored as SHA-256, bound to the client
// they were issued for and owned by a user. They never expire; they end when
// revoked (/revoke), deleted (/refreshtokens) or when their user or client
// is deleted. Ending one also revokes the access tokens issued with it.
import { durable } from './auth-store'
import { randomBytes } from 'node:crypto'
import { now } from '../../core/clock'
import { KEY_END } from '../../contract/key-encoding'
import type { AccessTokens, MintedToken } from './access-tokens'
import type { AuthStore, GrantFields, RefreshTokenRecord } from './auth-store'
import { randomToken, sha256 } from '../helpers/secrets'

/** [sub, hash]: an array key, so [sub] .. [sub, KEY_END] is exactly one user's tokens. */
const userKey = (sub: string, hash: string): [string, string] => [sub, hash]

export interface StoredRefreshToken {
  hash: string
  record: RefreshTokenRecord
}

export class RefreshTokens {
  constructor(private readonly store: AuthStore, private readonly accessTokens: AccessTokens) {}

  mint(fields: GrantFields): MintedToken<RefreshTokenRecord> {
    const token = randomToken()
    const record: RefreshTokenRecord = {
      clientAuthenticated: true, ...fields, id: randomBytes(16).toString('base64url'), created: now(), accessTokens: [],
    }
    return { token, hash: sha256(token), record }
  }

  /** Stores a minted token with the access token issued beside it (call inside a transaction). */
  put(minted: MintedToken<RefreshTokenRecord>, access: { hash: string; exp: number }): void {
    minted.record.accessTokens.push([access.hash, access.exp])
    void this.store.refreshTokens.put(minted.hash, minted.record)
    if (minted.record.sub !== undefined) void this.store.refreshTokensByUser.put(userKey(minted.record.sub, minted.hash), minted.hash)
  }

  find(token: string): StoredRefreshToken | undefined {
    const hash = sha256(token)
    const record = this.store.refreshTokens.get(hash)
    return record === undefined ? undefined : { hash, record }
  }

  /**
   * Stores an access token issued from the refresh token (`storeAccess`)
   * and records it there, in one transaction; false when the refresh token
   * was revoked meanwhile (then nothing is stored).
   */
  async attach(hash: string, access: { hash: string; exp: number }, storeAccess: () => void): Promise<boolean> {
    const t = now()
    const stored = await this.store.env.transaction(() => {
      const record = this.store.refreshTokens.get(hash)
      if (record === undefined) return false
      storeAccess()
      const live = record.accessTokens.filter(([, exp]) => exp > t)
      live.push([access.hash, access.exp])
      this.store.refreshTokens.putSync(hash, { ...record, accessTokens: live })
      return true
    })
    await durable(this.store)
    return stored
  }

  /** Ends a refresh token and the access tokens issued with it. */
  async revokeHash(hash: string): Promise<boolean> {
    const record = await this.store.env.transaction(() => {
      const found = this.store.refreshTokens.get(hash)
      if (found === undefined) return undefined
      this.store.refreshTokens.removeSync(hash)
      if (found.sub !== undefined) this.store.refreshTokensByUser.removeSync(userKey(found.sub, hash))
      return found
    })
    if (record === undefined) return false
    for (const [access] of record.accessTokens) await this.accessTokens.revokeHash(access)
    await durable(this.store)
    return true
  }

  /** A user's refresh tokens, optionally of one client, oldest first. */
  ofUser(sub: string, client?: string): StoredRefreshToken[] {
    const out: StoredRefreshToken[] = []
    for (const { value: hash } of this.store.refreshTokensByUser.getRange({ start: [sub], end: [sub, KEY_END] })) {
      const record = this.store.refreshTokens.get(hash)
      if (record !== undefined && (client === undefined || record.client === client)) out.push({ hash, record })
    }
    return out.sort((a, b) => a.record.created - b.record.created)
  }

  /**
   * Builds the user index afresh from the tokens. Builds before the array
   * key stored `${sub}\0${hash}` strings, which ofUser no longer finds: the
   * data directory's format migration calls this once.
   */
  async rebuildUserIndex(): Promise<number> {
    let n = 0
    await this.store.env.transaction(() => {
      for (const key of this.store.refreshTokensByUser.getKeys()) this.store.refreshTokensByUser.removeSync(key)
      for (const { key, value } of this.store.refreshTokens.getRange()) {
        if (value.sub === undefined) continue
        this.store.refreshTokensByUser.putSync(userKey(value.sub, key), key)
        n++
      }
    })
    await durable(this.store)
    return n
  }

  /** Ends every refresh token matching `which` (a scan: for admin deletions). */
  async revokeWhere(which: (r: RefreshTokenRecord) => boolean): Promise<number> {
    const hashes = [...this.store.refreshTokens.getRange()].filter(({ value }) => which(value)).map(({ key }) => key)
    for (const hash of hashes) await this.revokeHash(hash)
    return hashes.length
  }
}
