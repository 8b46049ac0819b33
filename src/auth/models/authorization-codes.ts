// Authorization codes: 256 random bits, stored as SHA-256, valid
// CODE_TTL_MS, bound to the client, the redirect URI and the PKCE challenge
// of the authorization request. A code is exchanged once; a second exchange
// fails and revokes what the first one gave (RFC 6749 4.1.2).
import { durable } from './auth-store'
import { now } from '../../clock'
import type { AuthStore, CodeRecord } from './auth-store'
import { randomToken, sha256 } from '../helpers/secrets'

export const CODE_TTL_MS = 60_000

export class AuthorizationCodes {
  constructor(private readonly store: AuthStore) {}

  async issue(fields: Omit<CodeRecord, 'exp'>): Promise<string> {
    const code = randomToken()
    await this.store.codes.put(sha256(code), { ...fields, exp: now() + CODE_TTL_MS })
    await durable(this.store)
    return code
  }

  async sweep(): Promise<void> {
    // Used codes are kept as long as the tokens they gave could be replayed against.
    const t = now() - 24 * 3600_000
    for (const { key, value } of this.store.codes.getRange()) if (value.exp <= t) void this.store.codes.remove(key)
    await durable(this.store)
  }
}
