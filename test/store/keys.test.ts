// The key module's builders and decoders on a real shard: every key a
// decoder reads is one its builder wrote and LMDB read back (a one-element
// key comes back as its element alone), so a change to either side that
// breaks the pair fails here, not in a scan.
import t from 'tap'
import {
  NEXT_SLOT_KEY, LEGACY_NEXT_SLOT_KEY, consentKey, consentOf, dueBy, eventHeadKey, eventHeadTenantOf, eventKey, eventSequenceOf,
  indexKey, nodeIdOf, nodeKey, prefixRange, scheduleKey, scheduleOf, tenantPrefix, tenantSlotKey, tenantOfSlotKey, webhookKey, webhookOf,
  type Key,
} from '../../workers/store/keys'
import { webhookDb } from '../../workers/store/webhooks'
import { customer, tempShard } from '../helpers/temp-shard'

t.test('node and index keys decode to the node id', async (t) => {
  const s = tempShard(t)
  await s.write(({ store }) => {
    store.counts.putSync(nodeKey('demo', customer('c/1')), 1)
    store.index.putSync(indexKey('demo', 'core', 'customer', 'name', 'term', 'c/2'), 1)
  })
  t.same([...s.store.counts.getKeys()].map((k) => nodeIdOf(k)), ['c/1'])
  t.same([...s.store.index.getKeys()].map((k) => nodeIdOf(k)), ['c/2'])
})

t.test('event keys: sequence and the head tenant read back; a tenant prefix holds only its events', async (t) => {
  const s = tempShard(t)
  await s.write(({ store }) => {
    for (const tenant of ['a', 'ab', 'b']) {
      store.events.putSync(eventKey(tenant, 7), { t: 1, j: tenant })
      store.eventHeads.putSync(eventHeadKey(tenant), { first: 7, last: 7 })
    }
  })
  t.same([...s.store.eventHeads.getKeys()].map(eventHeadTenantOf), ['a', 'ab', 'b'], 'one-element keys read back')
  const range = prefixRange(tenantPrefix('a'))
  t.same([...s.store.events.getRange(range)].map(({ key, value }) => [eventSequenceOf(key), value.j]), [[7, 'a']])
})

t.test('consent, webhook and schedule keys decode to what built them', async (t) => {
  const s = tempShard(t)
  await s.write(({ store }) => {
    store.consents.putSync(consentKey('demo', 'cr_1'), { subject: 'u', status: 'granted', slot: 0, revokedProperties: [], created: 1 })
    webhookDb(store).putSync(webhookKey('demo', 'wh_1'), { url: 'https://x', secret: new Uint8Array(1), created: 1, cursor: 0, failingSince: null, suspended: false, lastError: null })
    store.schedules.putSync(scheduleKey(20, 'demo', 'late'), { operation: 'DECAY', schema: 's', payload: {} })
    store.schedules.putSync(scheduleKey(10, 'demo', 'nodes/core/customer/c1'), { operation: 'SCHEDULED', schema: 's', payload: {} })
  })
  t.same([...s.store.consents.getKeys()].map(consentOf), [{ tenant: 'demo', ref: 'cr_1' }])
  t.same([...webhookDb(s.store).getKeys()].map(webhookOf), [{ tenant: 'demo', id: 'wh_1' }])
  t.same([...s.store.schedules.getKeys({ end: dueBy(10) })].map(scheduleOf), [{ dueAt: 10, tenant: 'demo', scheduleId: 'nodes/core/customer/c1' }], 'due by 10: only the first')
  t.equal([...s.store.schedules.getKeys({ end: dueBy(20) })].length, 2)
})

t.test('key-slot keys: a tenant read back, the slot counters are no tenant', async (t) => {
  const s = tempShard(t)
  await s.write(({ store }) => {
    store.keySlots.putSync(tenantSlotKey('demo'), 3)
    store.keySlots.putSync(NEXT_SLOT_KEY, 4)
    store.keySlots.putSync(LEGACY_NEXT_SLOT_KEY, 4)
  })
  const tenants = [...s.store.keySlots.getKeys()].map(tenantOfSlotKey)
  t.same(tenants.filter((x) => x !== undefined), ['demo'])
  t.equal(tenants.length, 3)
  t.equal(tenantOfSlotKey(['a', 'b'] satisfies Key), undefined, 'a longer key is no slot key')
})
