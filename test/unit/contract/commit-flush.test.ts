// flushOfQueuedWrites takes the flush of the commit under way when it is
// called: a later commit's flush (lmdb-js's `flushed` is read when awaited)
// does not hold it back, and a failed commit is no unhandled rejection.
import t from 'tap'
import { flushOfQueuedWrites, type Flushable } from '../../../src/contract/commit-flush'
import { sleep } from '../../../bench/wait'

/** Like lmdb-js's environment: `flushed` is the newest commit's flush whenever it is read. */
function fakeEnv(): { env: Flushable; newCommit(): () => void } {
  let current: Promise<void> = Promise.resolve()
  const env = { get flushed(): PromiseLike<unknown> { return { then: (ok, fail) => current.then(ok, fail) } } } as Flushable
  return {
    env,
    newCommit() {
      let resolve!: () => void
      current = new Promise<void>((r) => { resolve = r })
      return resolve
    },
  }
}

t.test("resolves with its own commit's flush, not a later one's", async (t) => {
  const { env, newCommit } = fakeEnv()
  const flushFirst = newCommit()
  const first = flushOfQueuedWrites(env)
  newCommit() // a later commit starts and is never flushed in this test
  let done = false
  void first.then(() => { done = true })
  await new Promise((r) => setImmediate(r))
  t.notOk(done, 'not before its own flush')
  flushFirst()
  await first
  t.pass('resolved although the later commit is not flushed')
})

t.test('a failed commit rejects, and unawaited it is no unhandled rejection', async (t) => {
  const failing: Flushable = { flushed: Promise.reject(new Error('Commit failed')) }
  const unhandled: unknown[] = []
  const listener = (reason: unknown): void => { unhandled.push(reason) }
  process.on('unhandledRejection', listener)
  t.teardown(() => { process.off('unhandledRejection', listener) })
  await t.rejects(flushOfQueuedWrites(failing), /Commit failed/)
  flushOfQueuedWrites(failing)
  await sleep(20)
  t.equal(unhandled.length, 0)
})
