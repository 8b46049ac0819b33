// The event log of a shard: per-tenant sequences that only grow, reads by
// cursor, and retention by count (on every append) and by age and count
// (the pruner), with the head kept on disk.
import t from 'tap'
import { appendEvent, eventsToPrune, head, pruneEvents, readEvents } from '../../workers/store/events'
import { putNode } from '../../workers/store/nodes'
import { eventsOf, customer, tempShard, writeCtx, type TempShard } from '../helpers/temp-shard'

async function append(s: TempShard, tenant: string, n: number, time = s.clock.time): Promise<number[]> {
  return s.write(() => Array.from({ length: n }, (_, i) => appendEvent(s.store, tenant, 'subscriptionCreated', 'auth/subscription', { i }, undefined, time)))
}


t.test('each tenant has its own sequence from 1; the envelope says what happened', async (t) => {
  const s = tempShard(t)
  t.same(head(s.store, 'a'), { first: 1, last: 0 }, 'an empty log')
  t.same(await append(s, 'a', 3), [1, 2, 3])
  t.same(await append(s, 'b', 2), [1, 2])
  t.same(await s.write(() => appendEvent(s.store, 'a', 'CREATE', 'schema-x', { id: 'n' }, 'trace-9', 1234)), 4)
  t.same(head(s.store, 'a'), { first: 1, last: 4 })
  t.same(eventsOf(s.store, 'a').at(-1), { id: 'trace-9', sequence: 4, tenant: 'a', operation: 'CREATE', schema: 'schema-x', payload: { id: 'n' }, time: 1234 })
  const ids = eventsOf(s.store, 'b').map((e) => e.id)
  t.match(ids[0], /^[0-9a-f-]{36}$/, 'without a trace id, a fresh id')
  t.not(ids[0], ids[1])
})

t.test('a read returns the events after the cursor, at most limit, and the next cursor', async (t) => {
  const s = tempShard(t)
  await append(s, 'a', 5)
  const r = readEvents(s.store, 'a', 1, 2)
  t.equal(r.kind, 'events')
  if (r.kind !== 'events') return
  t.same(r.events.map((e) => (JSON.parse(e) as { sequence: number }).sequence), [2, 3])
  t.equal(r.next, 3)
  t.same(readEvents(s.store, 'a', 5, 10), { kind: 'events', events: [], next: 5 }, 'at the end: nothing, the cursor stays')
  t.same(readEvents(s.store, 'a', 9, 10), { kind: 'events', events: [], next: 9 })
  t.same(readEvents(s.store, 'b', 0, 10), { kind: 'events', events: [], next: 0 }, "another tenant's log is apart")
})

t.test('the head survives a restart; sequences continue', async (t) => {
  const s = tempShard(t)
  await append(s, 'a', 3)
  await s.reopen()
  t.same(head(s.store, 'a'), { first: 1, last: 3 })
  t.same(await append(s, 'a', 1), [4])
})

t.test('count retention drops the oldest event with each event past the limit', async (t) => {
  const s = tempShard(t, undefined, undefined, 3)
  await append(s, 'a', 5)
  t.same(head(s.store, 'a'), { first: 3, last: 5 })
  t.same(eventsOf(s.store, 'a').map((e) => e.sequence), [3, 4, 5])
  t.equal(s.store.events.getKeysCount({ start: ['a'], end: ['a', 1_000] }), 3, 'the dropped ones are gone from disk')
  t.same(readEvents(s.store, 'a', 1, 10), { kind: 'expired', first: 3 }, 'a cursor before what is kept is expired')
  t.equal(readEvents(s.store, 'a', 2, 10).kind, 'events', 'a cursor just before the first kept is fine')
  await s.reopen(1)
  await append(s, 'a', 1)
  t.same(head(s.store, 'a'), { first: 6, last: 6 }, 'a limit lowered at a restart catches up on the next append')
})

t.test('the pruner drops events older than the cutoff', async (t) => {
  const s = tempShard(t)
  await append(s, 'a', 3, 1000)
  await append(s, 'a', 2, 2000)
  await append(s, 'b', 2, 1000)
  await s.write(() => pruneEvents(s.store, 2000, 1_000_000))
  t.same(head(s.store, 'a'), { first: 4, last: 5 })
  t.same(eventsOf(s.store, 'a').map((e) => e.sequence), [4, 5])
  t.same(head(s.store, 'b'), { first: 3, last: 2 }, 'everything pruned: an empty log that continues at 3')
  t.same(eventsOf(s.store, 'b'), [])
  t.equal(readEvents(s.store, 'b', 2, 10).kind, 'events')
  t.same(readEvents(s.store, 'b', 0, 10), { kind: 'expired', first: 3 })
  t.same(await append(s, 'b', 1), [3])
  await s.reopen()
  t.same(head(s.store, 'a'), { first: 4, last: 5 }, 'the pruned head is on disk')
})

t.test('the pruner also enforces the count, and an event at the cutoff stays', async (t) => {
  const s = tempShard(t)
  await append(s, 'a', 10, 5000)
  t.ok(eventsToPrune(s.store, 5000, 4), 'over the count: something to prune')
  t.notOk(eventsToPrune(s.store, 5000, 10), 'at the count, none older than the cutoff: nothing')
  t.ok(eventsToPrune(s.store, 5001, 100), 'older than the cutoff')
  await s.write(() => pruneEvents(s.store, 5000, 4))
  t.notOk(eventsToPrune(s.store, 5000, 4), 'pruned: nothing left to prune')
  t.same(eventsOf(s.store, 'a').map((e) => e.sequence), [7, 8, 9, 10])
  await s.write(() => pruneEvents(s.store, 0, 100))
  t.same(head(s.store, 'a'), { first: 7, last: 10 }, 'nothing to prune is no change')
})

t.test('graph writes append their events in the same transaction', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const touched = await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), {}, writeCtx(ref))
    return [...sc.touched]
  })
  t.same(touched, ['demo'], 'the tenant is announced')
  t.equal(head(s.store, 'demo').last, 1)
  t.equal(eventsOf(s.store, 'demo')[0]!.time, s.clock.time)
})
