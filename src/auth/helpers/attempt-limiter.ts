// Rate limits on the slow checks (scrypt: passwords and human-chosen client
// secrets), applied before a check is queued, so anonymous floods cannot
// fill the pool. Token buckets per source address and per account: a check
// takes a token when it starts and gives it back when it succeeds, so only
// failures (and checks still running) use up the budget. The per-account
// budget is above the lock-out's 15 failures, so the lock-out (and its exact
// message) comes first for users; for client secrets, which have no
// lock-out, it is the only limit. Time is the one clock (src/core/clock.ts).
import { now } from '../../core/clock'
import { ApiError } from '../../core/errors'
import { attemptsRefused } from '../../telemetry/metrics'

export interface BucketSettings {
  /** tokens when full: how many checks may fail (or run) at once */
  capacity: number
  /** one token comes back every this many ms */
  refillMs: number
}

export interface LimiterSettings {
  source: BucketSettings
  account: BucketSettings
  /** at most this many buckets of each kind are remembered */
  maxKeys: number
}

export const DEFAULT_LIMITS: LimiterSettings = {
  // 60 failures from one address, then one every 2 s (30 a minute).
  source: { capacity: 60, refillMs: 2000 },
  // 30 failures for one account (the lock-out blocks users at 15), then one every 30 s.
  account: { capacity: 30, refillMs: 30_000 },
  maxKeys: 100_000,
}

interface Bucket {
  tokens: number
  at: number
}

class Buckets {
  private readonly map = new Map<string, Bucket>()

  constructor(private readonly settings: BucketSettings, private readonly maxKeys: number) {}

  private current(key: string, t: number): Bucket {
    const b = this.map.get(key)
    if (b === undefined) return { tokens: this.settings.capacity, at: t }
    const tokens = Math.min(this.settings.capacity, b.tokens + (t - b.at) / this.settings.refillMs)
    return { tokens, at: t }
  }

  /** Seconds until a token is there (0: there is one now). */
  waitSeconds(key: string, t: number): number {
    const b = this.current(key, t)
    return b.tokens >= 1 ? 0 : Math.max(1, Math.ceil(((1 - b.tokens) * this.settings.refillMs) / 1000))
  }

  add(key: string, delta: number, t: number): void {
    const b = this.current(key, t)
    b.tokens = Math.max(0, Math.min(this.settings.capacity, b.tokens + delta))
    if (b.tokens >= this.settings.capacity) this.map.delete(key)
    else this.map.set(key, b)
    if (this.map.size > this.maxKeys) this.prune(t)
  }

  /** Forgets full buckets; past the limit still, the oldest ones (an attacker with that many addresses is beyond this limiter). */
  private prune(t: number): void {
    for (const [key, b] of this.map) {
      if (b.tokens + (t - b.at) / this.settings.refillMs >= this.settings.capacity) this.map.delete(key)
    }
    for (const key of this.map.keys()) {
      if (this.map.size <= this.maxKeys) break
      this.map.delete(key)
    }
  }
}

/** A started check: say once whether it failed (only failures keep their tokens). */
export interface Admission {
  end(failed: boolean): void
}

export function tooManyRequests(message: string, retryAfter: number, oauth: boolean): ApiError {
  return new ApiError('too_many_requests', message, {
    headers: { 'retry-after': String(retryAfter) },
    ...(oauth ? { oauth: { error: 'temporarily_unavailable', error_description: message } } : {}),
  })
}

export class AttemptLimiter {
  private readonly sources: Buckets
  private readonly accounts: Buckets

  constructor(settings: LimiterSettings = DEFAULT_LIMITS) {
    this.sources = new Buckets(settings.source, settings.maxKeys)
    this.accounts = new Buckets(settings.account, settings.maxKeys)
  }

  /** Takes a token from both buckets, or throws 429 too_many_requests with Retry-After. */
  admit(source: string, account: string, oauth: boolean): Admission {
    const t = now()
    const bySource = this.sources.waitSeconds(source, t)
    if (bySource > 0) {
      attemptsRefused.labels('source').inc()
      throw tooManyRequests(`too many failed sign-in or client authentication attempts from this address; retry in ${bySource} s`, bySource, oauth)
    }
    const byAccount = this.accounts.waitSeconds(account, t)
    if (byAccount > 0) {
      attemptsRefused.labels('account').inc()
      throw tooManyRequests(`too many failed attempts for this account; retry in ${byAccount} s`, byAccount, oauth)
    }
    this.sources.add(source, -1, t)
    this.accounts.add(account, -1, t)
    let open = true
    return {
      end: (failed) => {
        if (!open) return
        open = false
        if (failed) return
        const t2 = now()
        this.sources.add(source, 1, t2)
        this.accounts.add(account, 1, t2)
      },
    }
  }
}
