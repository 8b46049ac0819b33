// Brute-force protection (spec section 3, docs/design/contracts.md): 15 failed attempts,
// each within 15 minutes of the previous one (every failure restarts the
// interval), block the account for 15 minutes counted from the 15th failure.
// The 15th failure answers as a normal failure. During the block every
// attempt, even with the right password, is refused with the exact message;
// such attempts neither extend nor shorten the block, and neither does a
// password change (the counter is keyed by the account, not the password).
// A success outside a block clears the counter. Unknown usernames are
// counted the same way, so the answers do not reveal which accounts exist.
import { durable } from './auth-store'
import { ApiError } from '../../core/errors'
import { now } from '../../core/clock'
import type { AuthStore, LockoutRecord } from './auth-store'

export const MAX_FAILURES = 15
export const WINDOW_MS = 15 * 60_000
export const BLOCK_MS = 15 * 60_000
export const TOO_MANY_ATTEMPTS = 'Too many unsuccessful authentication attempts. Try again later.'

export function tooManyAttempts(oauth: boolean): ApiError {
  return new ApiError('too_many_attempts', TOO_MANY_ATTEMPTS, oauth ? { oauth: { error: 'invalid_grant', error_description: TOO_MANY_ATTEMPTS } } : {})
}

export function isBlocked(record: LockoutRecord | undefined, t: number): boolean {
  return record?.blockedUntil !== undefined && t < record.blockedUntil
}

/** The record after a failed attempt at `t` (never called during a block). */
export function afterFailure(record: LockoutRecord | undefined, t: number): LockoutRecord {
  const continues = record !== undefined && record.blockedUntil === undefined && t - record.lastFailure < WINDOW_MS
  const failures = continues ? record.failures + 1 : 1
  return failures >= MAX_FAILURES ? { failures, lastFailure: t, blockedUntil: t + BLOCK_MS } : { failures, lastFailure: t }
}

export class Lockout {
  constructor(private readonly store: AuthStore) {}

  blocked(username: string): boolean {
    return isBlocked(this.store.lockouts.get(username), now())
  }

  /** Counts a failed attempt; true when it started a block. */
  async failure(username: string): Promise<boolean> {
    let started = false
    await this.store.env.transaction(() => {
      const t = now()
      const record = this.store.lockouts.get(username)
      if (isBlocked(record, t)) return
      const next = afterFailure(record, t)
      started = next.blockedUntil !== undefined
      this.store.lockouts.putSync(username, next)
    })
    return started
  }

  async success(username: string): Promise<void> {
    if (this.store.lockouts.get(username) === undefined) return
    await this.store.env.transaction(() => {
      if (!isBlocked(this.store.lockouts.get(username), now())) this.store.lockouts.removeSync(username)
    })
  }

  /** Forgets counters that can no longer matter; run periodically. */
  async sweep(): Promise<void> {
    const t = now()
    for (const { key, value } of this.store.lockouts.getRange()) {
      if (!isBlocked(value, t) && t - value.lastFailure >= WINDOW_MS) void this.store.lockouts.remove(key)
    }
    await durable(this.store)
  }
}
