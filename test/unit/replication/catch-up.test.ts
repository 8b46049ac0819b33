import t from 'tap'
import { OwnerTrail, parseFollowReport } from '../../../src/replication/catch-up'

const LEASE = 3000

t.test('a report written since the renewal a lease period ago, within the gap, lets the owner hand over', async (t) => {
  const trail = new OwnerTrail(LEASE)
  trail.note(0, 100, 500) // the claim
  trail.note(1000, 110, 700)
  trail.note(2000, 120, 900)
  t.equal(trail.lag({ applied: 880, end: 890 }, 121), 20, 'the owner had applied 900 before revision 120: at least that was in the stream')
  t.equal(trail.allowedLag(), 100, '200 entries a second: 100 in half a second, and never fewer than 100')
  t.ok(trail.caughtUp({ applied: 880, end: 890 }, 121))
  t.ok(trail.caughtUp({ applied: 800, end: 805 }, 121), 'its tail saw an end the owner had passed: behind by 100')
  t.notOk(trail.caughtUp({ applied: 750, end: 1000 }, 121), 'it saw more than it applied: behind by 250')
  t.equal(trail.lag({ applied: 650, end: 650 }, 115), 50, 'judged against the renewals written before it only')
})

t.test('a report older than the claim or than a lease period is stale', async (t) => {
  const trail = new OwnerTrail(LEASE)
  trail.note(0, 100, 500)
  t.equal(trail.lag({ applied: 500, end: 500 }, 99), undefined, 'written before this host claimed: its writer may have died since')
  t.equal(trail.lag({ applied: 500, end: 500 }, 100), undefined, 'the claim itself')
  t.equal(trail.lag({ applied: 500, end: 500 }, 101), 0)
  for (let i = 1; i <= 6; i++) trail.note(i * 1000, 100 + 10 * i, 500 + 100 * i)
  // Kept: the newest note at least a lease old (t=3000, revision 130) and those since.
  t.equal(trail.lag({ applied: 1100, end: 1100 }, 125), undefined, 'older than the renewal a lease period ago')
  t.equal(trail.lag({ applied: 1100, end: 1100 }, 131), 0, 'newer: the owner had applied 800 by then')
  t.equal(trail.lag({ applied: 1100, end: 1100 }, 161), 0, 'the newest renewal passed: 1100 applied, as the owner had')
  t.equal(trail.lag({ applied: 1050, end: 1050 }, 161), 50)
})

t.test('under load a standby may lag by what the owner appends in half a second', async (t) => {
  const trail = new OwnerTrail(LEASE)
  trail.note(0, 100, 0)
  trail.note(1000, 110, 1000)
  trail.note(2000, 120, 2000)
  t.equal(trail.allowedLag(), 500, '1,000 entries a second')
  t.ok(trail.caughtUp({ applied: 1500, end: 1700 }, 121), 'behind by 500')
  t.notOk(trail.caughtUp({ applied: 1400, end: 1400 }, 121), 'behind by 600 (the owner had 2,000 before the report)')
  const idle = new OwnerTrail(LEASE)
  idle.note(0, 100, 50)
  t.equal(idle.allowedLag(), 100, 'the claim alone: no rate yet')
})

t.test('a trail reset (a new claim) forgets the former renewals', async (t) => {
  const trail = new OwnerTrail(LEASE)
  trail.note(0, 100, 500)
  trail.reset()
  t.equal(trail.lag({ applied: 0, end: 0 }, 200), undefined, 'nothing noted: nothing handed over')
  trail.note(5000, 300, 900)
  t.notOk(trail.caughtUp({ applied: 900, end: 900 }, 250), 'written before the new claim')
  t.ok(trail.caughtUp({ applied: 900, end: 900 }, 301))
})

t.test('follow reports as written to the bucket', async (t) => {
  t.same(parseFollowReport('{"applied":3,"end":7}'), { applied: 3, end: 7 })
  t.equal(parseFollowReport('{"applied":3}'), undefined)
  t.equal(parseFollowReport('nope'), undefined)
})
