// The scrypt pool's lanes (the compiled worker; build first): a flood at one
// account does not hold another account's check behind it, a new account is
// refused at once (503) when the accounts already waiting fill the budget,
// and the server's own hashing is never refused.
import t from 'tap'
import { join } from 'node:path'
import { PasswordHasher } from '../../../src/auth/helpers/password-hasher'
import { ApiError } from '../../../src/core/errors'

const WORKER = join(__dirname, '..', '..', '..', 'dist', 'workers', 'crypto', 'password-hash.js')

t.test('one check of each waiting lane in turn', async (t) => {
  const hasher = new PasswordHasher(WORKER, 1)
  t.teardown(() => hasher.close())
  const stored = await hasher.hash('right')
  const order: string[] = []
  const flood = Array.from({ length: 8 }, (_, i) => hasher.verify('wrong', stored, 'name:ghost').then(() => order.push(`ghost-${i}`)))
  const other = hasher.verify('right', stored, 'client:web-app').then((ok) => {
    order.push('web-app')
    return ok
  })
  t.equal(await other, true)
  await Promise.all(flood)
  t.ok(order.indexOf('web-app') <= 2, `the other account's check waited for the running check and one more of the flood at most (order: ${order.join(' ')})`)
})

t.test('a new lane is refused when the waiting lanes fill the budget; internal work is not', async (t) => {
  const hasher = new PasswordHasher(WORKER, 1, 1)
  t.teardown(() => hasher.close())
  const stored = await hasher.hash('right')
  const running = hasher.verify('x', stored, 'user:a')
  const waiting = hasher.verify('x', stored, 'user:b')
  const sameLane = hasher.verify('x', stored, 'user:b')
  const third = hasher.verify('x', stored, 'user:c')
  const err = await hasher.verify('x', stored, 'user:d').then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ApiError, 'refused at once')
  t.equal((err as ApiError).status, 503)
  t.equal((err as ApiError).headers['retry-after'], '1')
  const internal = hasher.hash('bootstrap secret')
  t.same(await Promise.all([running, waiting, sameLane, third]), [false, false, false, false], 'a waiting lane takes more checks')
  t.equal((await internal).alg, 'scrypt', 'internal hashing waits its turn, never refused')
  t.equal(await hasher.verify('right', stored, 'user:d'), true, 'once the lanes drained, the new one is served')
})

t.test('a burst of 16 clients starting at once all get their checks (the default budget)', async (t) => {
  const hasher = new PasswordHasher(WORKER, 2)
  t.teardown(() => hasher.close())
  const stored = await hasher.hash('right')
  const results = await Promise.all(Array.from({ length: 16 }, (_, i) => hasher.verify('right', stored, `client:bench-client-${i}`).then((ok) => ok, (e: unknown) => e)))
  t.same(results, Array.from({ length: 16 }, () => true), 'none refused with 503')
})
