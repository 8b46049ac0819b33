// The chaos bench's pure parts: its command line, how a recovery is timed
// (an outage that starts late still counts to its end), and a rejoin's goals.
import t from 'tap'
import { parseChaosOptions } from '../../../bench/chaos-options'
import { recoveryMs } from '../../../bench/chaos-probe'
import { rejoinMissed } from '../../../bench/chaos-goals'

t.test('the command line: defaults, values, unknown scenarios refused', async (t) => {
  t.same(parseChaosOptions([], ['a', 'b']), { runs: 3, leaseMs: 3000, only: [], workers: 2 })
  t.same(parseChaosOptions(['--runs', '20', '--lease-ms', '5000', '--only', 'b'], ['a', 'b']), { runs: 20, leaseMs: 5000, only: ['b'], workers: 2 })
  t.throws(() => parseChaosOptions(['--only', 'c'], ['a', 'b']), /unknown scenario c/)
  t.throws(() => parseChaosOptions(['--runs', '0'], ['a']), /--runs needs a number/)
})

/** A served() answering the given sequence, then its last answer forever. */
function answers(...seq: boolean[]): () => Promise<boolean> {
  let i = 0
  return async () => seq[Math.min(i++, seq.length - 1)]!
}

t.test('recovery ends with the first probe served everywhere, once nothing is watched for', async (t) => {
  const ms = await recoveryMs(Date.now(), answers(false, false, true), 10_000)
  t.ok(ms !== undefined && ms >= 150 && ms < 2000, `about two probes (${ms} ms)`)
})

t.test('an outage starting within the observed time counts to its end', async (t) => {
  const since = Date.now()
  const ms = await recoveryMs(since, answers(true, true, false, false, true), 10_000, 600)
  t.ok(ms !== undefined && ms >= 350, `not the first served probe (${ms} ms)`)
})

t.test('no recovery within the give-up time is undefined', async (t) => {
  t.equal(await recoveryMs(Date.now(), answers(false), 300), undefined)
})

t.test('a rejoin misses its goals with a 503 after the return, or placement settled late', async (t) => {
  t.same(rejoinMissed({ settledMs: 7000, others: { fault: { 503: 40 }, restore: { 0: 2 } } }, 3000), [], '503s of the fault itself do not count')
  t.same(rejoinMissed({ settledMs: 8000, others: { restore: { 503: 3 } } }, 3000), ['3 503s after the victim\'s return'])
  t.same(rejoinMissed({ settledMs: 8001, others: {} }, 3000), ['placement settled 8001 ms after the return (goal 8000 ms)'])
  t.same(rejoinMissed({ settledMs: undefined, others: {} }, 3000), ['placement settled never after the return (goal 8000 ms)'])
})
