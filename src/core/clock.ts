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

/**
 * Test-only: follows CLOCK_OFFSET_FILE when the environment names it (the
 * front thread and every shard actor call this at start, so all of them tell
 * the same time). Returns the file, or undefined when the system clock stays.
 */
export function useOffsetClockFromEnv(env: NodeJS.ProcessEnv, read: (p: string) => string): string | undefined {
  const file = env['CLOCK_OFFSET_FILE']
  if (file === undefined || file === '') return undefined
  useClock(offsetClockFromFile(file, read))
  return file
}

/**
 * Test-only: a clock that runs `offset` ms ahead of the system clock, the
 * offset read (a decimal number) from `path` on every call, so a test can
 * move an out-of-process server through a lock-out without waiting.
 */
export function offsetClockFromFile(path: string, read: (p: string) => string): Clock {
  return {
    now(): number {
      let offset = 0
      try {
        offset = Number(read(path).trim())
      } catch {
        offset = 0
      }
      return Date.now() + (Number.isFinite(offset) ? offset : 0)
    },
  }
}
