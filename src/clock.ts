// The one clock every time rule reads (token expiry, lock-out, schedules), so
// tests can replace it instead of waiting.

export interface Clock {
  now(): number
}

const systemClock: Clock = { now: () => Date.now() }
let current: Clock = systemClock

export function now(): number {
  return current.now()
}

/** Replace the clock (tests only); returns a function that restores the previous one. */
export function useClock(clock: Clock): () => void {
  const previous = current
  current = clock
  return () => {
    current = previous
  }
}
