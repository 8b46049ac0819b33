// An auth store in a temporary directory and a clock the test moves, both
// undone at the end of the test.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openAuthStore, type AuthStore } from '../../src/auth/models/auth-store'
import { useClock } from '../../src/core/clock'

export interface StoreAndClock {
  store: AuthStore
  /** the injected clock's time, epoch ms: assign to move it */
  clock: { time: number }
}

export function tempAuthStore(t: { teardown(fn: () => Promise<void>): void }, start = 1_700_000_000_000): StoreAndClock {
  const dir = mkdtempSync(join(tmpdir(), 'auth-store-test-'))
  const store = openAuthStore(dir)
  const clock = { time: start }
  const restore = useClock({ now: () => clock.time })
  t.teardown(async () => {
    restore()
    await store.env.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { store, clock }
}
