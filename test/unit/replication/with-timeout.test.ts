import t from 'tap'
import { withTimeout } from '../../../src/replication/with-timeout'

t.test('a call that settles in time gives its result; one that never settles rejects saying what', async (t) => {
  t.equal(await withTimeout(Promise.resolve(7), 1000, 'a quick call'), 7)
  await t.rejects(withTimeout(Promise.reject(new Error('refused')), 1000, 'a refused call'), /refused/)
  await t.rejects(withTimeout(new Promise(() => undefined), 50, 'listing the presence keys'), /listing the presence keys: no answer in 50 ms/)
})
