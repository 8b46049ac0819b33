// An owner hands its shard over only once the named host's follow report
// (src/replication/catch-up.ts) is recent and says it has caught up: a
// report written before the owner's claim, or one that lacks too many
// entries, keeps the shard where it is; the standby's own report lets it go,
// and the standby claims it at once.
import t from 'tap'
import { ABORT } from 'lmdb'
import { parseLease } from '../../src/replication/lease-map'
import { followReportKey, shardLeaseKey } from '../../src/contract/cluster-names'
import { shardDatabases } from '../../workers/actor/replication/recorder'
import { appliedSequence } from '../../workers/actor/replication/apply'
import { natsServerAvailable } from '../helpers/nats-server'
import { shardReplicas } from '../helpers/shard-replicas'
import { sleep, until } from '../../bench/wait'

t.test('a hand-over waits for a recent follow report that has caught up', { skip: natsServerAvailable() ? false : 'nats-server not installed' }, async (t) => {
  const { kv, replicaOf } = await shardReplicas(t)
  const report = (value: unknown): Promise<number> => kv.put(followReportKey(0, 'b'), JSON.stringify(value))
  const a = await replicaOf('a')
  const b = await replicaOf('b')
  await report({ applied: 0, end: 0 }) // b's report of an earlier life: before a's claim
  await a.replica.beat({ preferredHere: true, handOverTo: undefined })
  t.ok(a.replica.serves(), 'a claims the shard')
  for (let i = 0; i < 3; i++) await a.replica.write(() => shardDatabases(a.store).get('nodes')!.putSync(['demo', `n${i}`], { i }), ABORT)
  await until('b to follow a', () => appliedSequence(b.store) === appliedSequence(a.store))
  const toB = { preferredHere: true, handOverTo: 'b' }

  await a.replica.beat(toB)
  t.ok(a.replica.serves(), 'a report older than the claim: a keeps the shard')
  await report({ applied: 0, end: 500 })
  await a.replica.beat(toB)
  t.ok(a.replica.serves(), 'a report that lacks 500 entries: a keeps the shard')

  const progress = b.replica.progress()
  t.same(progress, { applied: appliedSequence(a.store), end: appliedSequence(a.store) }, "b's own report: caught up")
  await report(progress)
  await a.replica.beat(toB)
  t.notOk(a.replica.serves(), 'a hands the shard over')
  t.equal(parseLease((await kv.get(shardLeaseKey(0)))!.string())?.handTo, 'b', 'to b')
  const handedAt = performance.now()
  while (!b.replica.serves() && performance.now() - handedAt < 5000) {
    await b.replica.beat({ preferredHere: false, handOverTo: undefined, handedOnly: true })
    await sleep(20)
  }
  t.ok(b.replica.serves(), 'b claims it at once, also in its first lease period')
  t.equal(a.replica.progress()?.applied, appliedSequence(a.store), 'a follows the stream again, and reports it')
})
