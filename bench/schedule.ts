// The open-loop generator's clock: request i is meant to leave at
// start + i / rate, whatever happened to the requests before it. Latency is
// measured from that intended time, not from when the request actually left,
// so time a request spent waiting behind a slow one (in the generator, in the
// connection pool or in the server) is counted: the coordinated-omission
// correction of wrk2 and HdrHistogram.

export class FixedRateSchedule {
  private issued = 0
  readonly intervalMs: number

  constructor(readonly ratePerS: number, readonly startMs: number) {
    if (!(ratePerS > 0) || !Number.isFinite(ratePerS)) throw new RangeError(`rate must be a positive number, got ${ratePerS}`)
    this.intervalMs = 1000 / ratePerS
  }

  /** Intended send time of request i (0-based). */
  intendedAt(i: number): number {
    return this.startMs + i * this.intervalMs
  }

  /** How many requests were taken so far. */
  get taken(): number {
    return this.issued
  }

  /** How many requests should have left by `nowMs` (those with an intended time at or before it). */
  dueBy(nowMs: number): number {
    if (nowMs < this.startMs) return 0
    return Math.floor((nowMs - this.startMs) / this.intervalMs) + 1
  }

  /** How many requests have an intended time in [fromMs, toMs). */
  scheduledIn(fromMs: number, toMs: number): number {
    // A bound that is an intended time up to floating-point error counts as that time (else a window of 50 could count 51).
    const firstAtOrAfter = (t: number): number => Math.max(0, Math.ceil((t - this.startMs) / this.intervalMs - 1e-6))
    return Math.max(0, firstAtOrAfter(toMs) - firstAtOrAfter(fromMs))
  }

  /** The intended time of the next request not yet taken. */
  nextMs(): number {
    return this.intendedAt(this.issued)
  }

  /** Takes the next request if it is due by `nowMs`: its intended time, or undefined when it is not due yet. */
  takeDue(nowMs: number): number | undefined {
    const at = this.nextMs()
    if (at > nowMs) return undefined
    this.issued++
    return at
  }
}

/** Latency corrected for coordinated omission: from the intended send time to the answer, never negative. */
export function correctedLatencyMs(intendedMs: number, doneMs: number): number {
  return Math.max(0, doneMs - intendedMs)
}

/** Whether a request belongs to the measured window: its intended send time is in [start, end). */
export function inWindow(intendedMs: number, window: { startMs: number; endMs: number }): boolean {
  return intendedMs >= window.startMs && intendedMs < window.endMs
}

/** How late the generator sent, beyond which its own delay would distort the percentiles. */
export const SEND_LAG_LIMIT_MS = 2
/** Share of the window's scheduled requests that must have left, at the latest by the window's end. */
export const SENT_SHARE_LIMIT = 0.99

/**
 * Whether the generator kept to its schedule: it sent (nearly) every request
 * the window scheduled, and its p99 send delay stayed small. When it did not,
 * the latencies include the generator's own delay and say so.
 */
export function keptSchedule(s: { scheduled: number; sent: number; sendLagP99Ms: number }): boolean {
  return s.sent >= s.scheduled * SENT_SHARE_LIMIT && s.sendLagP99Ms <= SEND_LAG_LIMIT_MS
}

/** The fractions of each scenario's closed-loop maximum that the open-loop pass runs at. */
export const OPEN_LOOP_FRACTIONS = [0.25, 0.5, 0.75] as const

/** The fixed rate for a fraction of a measured maximum (at least 1 req/s). */
export const rateFor = (maxRps: number, fraction: number): number => Math.max(1, Math.round(maxRps * fraction))
