// Scheduled and decay events on a real shard (spec 4 and 6): a write with a
// timing records a STORE event and a schedule; firing at an injected time
// emits SCHEDULED (or DECAY) once, in due order; a later schedule with the
// same scheduleId replaces the earlier one; schedules survive a restart.
import t from 'tap'
import { fireDue, nextDue } from '../../workers/store/schedules'
import { putNode, putNodeProperty } from '../../workers/store/nodes'
import { incrementCounter, putRelation } from '../../workers/store/relations'
import { customer, eventsOf, tempShard, viewed, writeCtx, type TempShard } from '../helpers/temp-shard'

const T0 = 1_700_000_000_000
const iso = (ms: number): string => new Date(ms).toISOString()

async function fire(s: TempShard, now: number, limit?: number): Promise<string[]> {
  return [...await s.write(() => fireDue(s.store, now, limit))]
}

t.test('a node write with a schedule records a STORE event and fires SCHEDULED at its time, once', async (t) => {
  const s = tempShard(t, undefined, T0)
  const ref = await s.consent('demo')
  const at = T0 + 60_000
  const changed = await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), {}, writeCtx(ref, { trace: 'tr', schedule: { at, parameter: 'remind' } }))
    return sc.schedulesChanged
  })
  t.ok(changed, 'the actor is told to look at its timer')
  const [, store] = eventsOf(s.store, 'demo')
  t.same(store, {
    id: 'tr', sequence: 2, tenant: 'demo', operation: 'STORE', schema: 'core/ScheduledEvent', time: T0,
    payload: { id: 'c1', schema: 'nodes/core/customer', consentRefId: ref, scheduleAt: iso(at), scheduleParameter: 'remind', scheduleId: 'nodes/core/customer/c1' },
  })
  t.equal(nextDue(s.store), at)

  t.same(await fire(s, at - 1), [], 'not before its time')
  t.equal(eventsOf(s.store, 'demo').length, 2)
  t.same(await fire(s, at + 5), ['demo'])
  const fired = eventsOf(s.store, 'demo')[2]!
  t.match(fired, { sequence: 3, operation: 'SCHEDULED', schema: 'nodes/core/customer', time: at + 5 })
  t.same(fired.payload, { id: 'c1', consentRefId: ref, scheduleParameter: 'remind' })
  t.equal(nextDue(s.store), undefined)
  t.same(await fire(s, at + 10_000), [], 'fired once')
  t.equal(s.store.scheduleIds.getKeysCount(), 0)
})

t.test('the shapes of the four subjects follow the spec table', async (t) => {
  const s = tempShard(t, undefined, T0)
  const ref = await s.consent('demo')
  const timing = { schedule: { at: T0 + 1, parameter: undefined } }
  await s.write((sc) => {
    putNodeProperty(sc, 'demo', customer('c1'), 'name', 'Ada', writeCtx(ref, timing))
    putRelation(sc, 'demo', viewed('c1', 'p1'), {}, writeCtx(ref, timing))
    incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'views', writeCtx(ref, timing))
  })
  const stores = eventsOf(s.store, 'demo').filter((e) => e.operation === 'STORE').map((e) => e.payload)
  t.same(stores, [
    { id: 'c1', schema: 'nodes/core/customer/name', consentRefId: ref, scheduleAt: iso(T0 + 1), scheduleParameter: null, scheduleId: 'nodes/core/customer/name/c1' },
    {
      fromId: 'c1', toId: 'p1', relationshipId: 'r1', schema: 'relations/core/customer/core/product/core/viewed', consentRefId: ref,
      scheduleAt: iso(T0 + 1), scheduleParameter: null, scheduleId: 'relations/core/customer/c1/core/product/p1/core/viewed/r1',
    },
    {
      fromId: 'c1', toId: 'p1', relationshipId: 'r1', schema: 'relations/core/customer/core/product/core/viewed/views', consentRefId: ref,
      scheduleAt: iso(T0 + 1), scheduleParameter: null, scheduleId: 'relations/core/customer/c1/core/product/p1/core/viewed/views/r1',
    },
  ])
  await fire(s, T0 + 1)
  const fired = eventsOf(s.store, 'demo').filter((e) => e.operation === 'SCHEDULED')
  t.same(fired.map((e) => [e.schema, e.payload]), [
    ['nodes/core/customer/name', { id: 'c1', consentRefId: ref, scheduleParameter: null }],
    ['relations/core/customer/core/product/core/viewed', { fromId: 'c1', toId: 'p1', id: 'r1', consentRefId: ref, scheduleParameter: null }],
    ['relations/core/customer/core/product/core/viewed/views', { fromId: 'c1', toId: 'p1', id: 'r1', consentRefId: ref, scheduleParameter: null }],
  ])
})

t.test('a later schedule with the same scheduleId replaces the earlier one', async (t) => {
  const s = tempShard(t, undefined, T0)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), {}, writeCtx(ref, { schedule: { at: T0 + 1000, parameter: 'first' } })))
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), {}, writeCtx(ref, { schedule: { at: T0 + 5000, parameter: 'second' } })))
  t.equal(s.store.schedules.getKeysCount(), 1)
  t.equal(nextDue(s.store), T0 + 5000)
  t.same(await fire(s, T0 + 2000), [], 'the replaced time does not fire')
  await fire(s, T0 + 5000)
  t.same(eventsOf(s.store, 'demo').filter((e) => e.operation === 'SCHEDULED').map((e) => e.payload.scheduleParameter), ['second'])
  // Earlier than the one it replaces works too.
  await s.write((sc) => putNode(sc, 'demo', customer('c2'), {}, writeCtx(ref, { schedule: { at: T0 + 9000, parameter: 'a' } })))
  await s.write((sc) => putNode(sc, 'demo', customer('c2'), {}, writeCtx(ref, { schedule: { at: T0 + 7000, parameter: 'b' } })))
  t.equal(nextDue(s.store), T0 + 7000)
  await fire(s, T0 + 10_000)
  t.same(eventsOf(s.store, 'demo').filter((e) => e.operation === 'SCHEDULED').map((e) => e.payload.scheduleParameter), ['second', 'b'])
})

t.test('decay records its own STORE event and schedule and fires DECAY', async (t) => {
  const s = tempShard(t, undefined, T0)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), {}, writeCtx(ref, { schedule: { at: T0 + 10, parameter: 's' }, decay: { at: T0 + 20, parameter: 'd' } })))
  const decayStore = eventsOf(s.store, 'demo').find((e) => e.schema === 'core/DecayEvent')
  t.same(decayStore?.payload, { id: 'c1', schema: 'nodes/core/customer', consentRefId: ref, decayAt: iso(T0 + 20), decayParameters: 'd', scheduleId: 'decay/nodes/core/customer/c1' })
  t.equal(decayStore?.operation, 'STORE')
  t.equal(s.store.schedules.getKeysCount(), 2, 'a schedule and a decay of one node do not replace each other')
  await fire(s, T0 + 100)
  const fired = eventsOf(s.store, 'demo').slice(-2)
  t.same(fired.map((e) => [e.operation, e.schema, e.payload]), [
    ['SCHEDULED', 'nodes/core/customer', { id: 'c1', consentRefId: ref, scheduleParameter: 's' }],
    ['DECAY', 'nodes/core/customer', { id: 'c1', consentRefId: ref, decayParameters: 'd' }],
  ], 'in due order')
})

t.test('firing takes the due schedules in due order, at most limit at a time, across tenants', async (t) => {
  const s = tempShard(t, undefined, T0)
  const a = await s.consent('a')
  const b = await s.consent('b')
  await s.write((sc) => {
    for (let i = 0; i < 5; i++) putNode(sc, 'a', customer(`c${i}`), {}, writeCtx(a, { schedule: { at: T0 + 100 - i, parameter: String(i) } }))
    putNode(sc, 'b', customer('x'), {}, writeCtx(b, { schedule: { at: T0 + 50, parameter: 'b' } }))
    putNode(sc, 'b', customer('later'), {}, writeCtx(b, { schedule: { at: T0 + 10_000, parameter: 'later' } }))
  })
  t.same(await fire(s, T0 + 1000, 2), ['b', 'a'])
  t.same(await fire(s, T0 + 1000, 2), ['a'])
  t.same(await fire(s, T0 + 1000), ['a'])
  const order = eventsOf(s.store, 'a').filter((e) => e.operation === 'SCHEDULED').map((e) => e.payload.scheduleParameter)
  t.same(order, ['4', '3', '2', '1', '0'], 'earliest first')
  t.equal(nextDue(s.store), T0 + 10_000, 'the one not due is left')
})

t.test('a schedule survives a restart and fires after it', async (t) => {
  const s = tempShard(t, undefined, T0)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), {}, writeCtx(ref, { schedule: { at: T0 + 1000, parameter: undefined } })))
  await s.reopen()
  t.equal(nextDue(s.store), T0 + 1000)
  t.same(await fire(s, T0 + 3_600_000), ['demo'])
  t.equal(eventsOf(s.store, 'demo').at(-1)?.operation, 'SCHEDULED')
})

t.test('a refused write records no schedule', async (t) => {
  const s = tempShard(t, undefined, T0)
  const a = await s.consent('demo', 'alice')
  const b = await s.consent('demo', 'bob')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), {}, writeCtx(a)))
  const changed = await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), {}, writeCtx(b, { schedule: { at: T0 + 1, parameter: undefined } }))
    return sc.schedulesChanged
  })
  t.notOk(changed)
  t.equal(nextDue(s.store), undefined)
  t.equal(eventsOf(s.store, 'demo').length, 1)
})
