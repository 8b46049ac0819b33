// The lock-out rules with an injected clock: the record after each failure,
// the block from the 15th failure, its exact end, and what does not move it.
import t from 'tap'
import { afterFailure, BLOCK_MS, isBlocked, Lockout, MAX_FAILURES, TOO_MANY_ATTEMPTS, tooManyAttempts, WINDOW_MS } from '../../../src/auth/models/lockout'
import { tempAuthStore } from '../../helpers/auth-store'

const MIN = 60_000

t.test('the constants of spec section 3', async (t) => {
  t.equal(MAX_FAILURES, 15)
  t.equal(WINDOW_MS, 15 * MIN)
  t.equal(BLOCK_MS, 15 * MIN)
  t.equal(TOO_MANY_ATTEMPTS, 'Too many unsuccessful authentication attempts. Try again later.')
  const err = tooManyAttempts(false)
  t.equal(err.status, 400)
  t.equal(err.type, 'too_many_attempts')
  t.equal(err.message, TOO_MANY_ATTEMPTS)
  t.same(tooManyAttempts(true).oauth, { error: 'invalid_grant', error_description: TOO_MANY_ATTEMPTS })
})

t.test('afterFailure: counting within the interval, restarting after it, blocking at 15', async (t) => {
  let r = afterFailure(undefined, 0)
  t.same(r, { failures: 1, lastFailure: 0 })
  for (let i = 2; i <= 14; i++) r = afterFailure(r, (i - 1) * (15 * MIN - 1))
  t.equal(r.failures, 14, 'each failure within 15 minutes of the previous one counts')
  t.equal(r.blockedUntil, undefined)
  const at15 = r.lastFailure + 15 * MIN - 1
  const blocked = afterFailure(r, at15)
  t.same(blocked, { failures: 15, lastFailure: at15, blockedUntil: at15 + 15 * MIN })
  t.same(afterFailure({ failures: 14, lastFailure: 0 }, 15 * MIN), { failures: 1, lastFailure: 15 * MIN }, 'exactly 15 minutes later: a new interval')
  t.same(afterFailure({ failures: 15, lastFailure: 0, blockedUntil: 15 * MIN }, 15 * MIN), { failures: 1, lastFailure: 15 * MIN }, 'after a block: a new count')
})

t.test('isBlocked: from the 15th failure until exactly 15 minutes later', async (t) => {
  const r = { failures: 15, lastFailure: 1000, blockedUntil: 1000 + BLOCK_MS }
  t.notOk(isBlocked(undefined, 0))
  t.ok(isBlocked(r, 1000))
  t.ok(isBlocked(r, 1000 + BLOCK_MS - 1))
  t.notOk(isBlocked(r, 1000 + BLOCK_MS))
  t.notOk(isBlocked({ failures: 14, lastFailure: 1000 }, 1000))
})

t.test('Lockout with the store and an injected clock', async (t) => {
  const { store, clock } = tempAuthStore(t, 10_000_000)
  const lockout = new Lockout(store)
  for (let i = 0; i < 14; i++) {
    await lockout.failure('u')
    clock.time += MIN
  }
  t.notOk(lockout.blocked('u'), '14 failures')
  await lockout.success('u')
  t.equal(store.lockouts.get('u'), undefined, 'a success clears the count')
  for (let i = 0; i < 15; i++) await lockout.failure('u')
  const blockedAt = clock.time
  t.ok(lockout.blocked('u'), 'blocked by the 15th failure')
  clock.time += 10 * MIN
  await lockout.failure('u')
  await lockout.success('u')
  t.equal(store.lockouts.get('u')?.blockedUntil, blockedAt + BLOCK_MS, 'attempts during the block change nothing')
  clock.time = blockedAt + BLOCK_MS - 1
  t.ok(lockout.blocked('u'))
  clock.time = blockedAt + BLOCK_MS
  t.notOk(lockout.blocked('u'), 'active again 15 minutes after the 15th failure')
  t.notOk(lockout.blocked('other'), 'accounts are counted apart')
  clock.time += WINDOW_MS
  await lockout.sweep()
  t.equal(store.lockouts.get('u'), undefined, 'swept once it can no longer matter')
})
