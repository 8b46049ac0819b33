// Authorization codes: 256 random bits, stored as SHA-256, valid
// CODE_TTL_MS, bound to the client, the redirect URI and the PKCE challenge
// of the authorization request. A code is exchanged once; a second exchange
// fails and revokes what the first one gave (RFC 6749 4.1.2).
import { durable } from './auth-store'
import { now } from '../../core/clock'
import type { AccessTokenRecord, AuthStore, CodeRecord, RefreshTokenRecord } from './auth-store'
import type { AccessTokens, MintedToken } from './access-tokens'
import type { RefreshTokens } from './refresh-tokens'
import { randomToken, sha256 } from '../helpers/secrets'

export const CODE_TTL_MS = 60_000

export class AuthorizationCodes {
  constructor(private readonly store: AuthStore, private readonly accessTokens: AccessTokens, private readonly refreshTokens: RefreshTokens) {}

  async issue(fields: Omit<CodeRecord, 'exp'>): Promise<string> {
    const code = randomToken()
    await this.store.codes.put(sha256(code), { ...fields, exp: now() + CODE_TTL_MS })
    await durable(this.store)
    return code
  }

  /** The code's record while it has not expired (used or not). */
  find(code: string): CodeRecord | undefined {
    const record = this.store.codes.get(sha256(code))
    return record === undefined || record.exp <= now() ? undefined : record
  }

  /** A replayed code: revokes the tokens its first exchange gave. */
  async revokeGiven(record: CodeRecord): Promise<void> {
    if (record.used === undefined) return
    if (record.used.refresh !== undefined) await this.refreshTokens.revokeHash(record.used.refresh)
    await this.accessTokens.revokeHash(record.used.access)
  }

  /**
   * Marks the code used and stores the tokens exchanged for it, in one
   * transaction: of two concurrent exchanges exactly one wins. The loser
   * gets false, and what the winner got is revoked (a replay).
   */
  async consume(code: string, access: MintedToken<AccessTokenRecord>, refresh: MintedToken<RefreshTokenRecord> | undefined): Promise<boolean> {
    const hash = sha256(code)
    const won = await this.store.env.transaction(() => {
      const current = this.store.codes.get(hash)
      if (current === undefined || current.used !== undefined) return false
      this.store.codes.putSync(hash, { ...current, used: { access: access.hash, ...(refresh === undefined ? {} : { refresh: refresh.hash }) } })
      this.accessTokens.put(access)
      if (refresh !== undefined) this.refreshTokens.put(refresh, { hash: access.hash, exp: access.record.exp })
      return true
    })
    if (!won) {
      const current = this.store.codes.get(hash)
      if (current !== undefined) await this.revokeGiven(current)
      return false
    }
    await durable(this.store)
    return true
  }

  /** Ends the codes of a deleted client. */
  removeForClient(clientId: string): void {
    for (const { key, value } of this.store.codes.getRange()) if (value.client === clientId) void this.store.codes.remove(key)
  }

  async sweep(): Promise<void> {
    // Used codes are kept as long as the tokens they gave could be replayed against.
    const t = now() - 24 * 3600_000
    for (const { key, value } of this.store.codes.getRange()) if (value.exp <= t) void this.store.codes.remove(key)
    await durable(this.store)
  }
}
