import t from 'tap'
import { now, useClock } from '../../../src/core/clock'

t.test('the default clock is the system clock', async (t) => {
  const before = Date.now()
  const n = now()
  const after = Date.now()
  t.ok(n >= before && n <= after, `${n} within [${before}, ${after}]`)
})

t.test('useClock replaces the clock and the returned function restores it', async (t) => {
  let fake = 1_000
  const restore = useClock({ now: () => fake })
  t.equal(now(), 1_000)
  fake += 15 * 60_000
  t.equal(now(), 1_000 + 15 * 60_000, 'time moves only when the test moves it')
  restore()
  t.ok(Math.abs(now() - Date.now()) < 1_000, 'back on the system clock')
})

t.test('nested clocks restore in order', async (t) => {
  const restoreA = useClock({ now: () => 1 })
  const restoreB = useClock({ now: () => 2 })
  t.equal(now(), 2)
  restoreB()
  t.equal(now(), 1, 'the previous fake clock is back')
  restoreA()
  t.ok(now() > 1_600_000_000_000, 'the system clock is back')
})
