// Store operations whose keys read back or share a database, in-process on a
// real shard: time retention finds each tenant's events (a one-element key
// reads back as its element alone), and the key-slot counter cannot be a
// tenant's slot.
import t from 'tap'
import { newKeySlot, tenantSlot } from '../../../workers/store/consents'
import { appendEvent, head, pruneEvents, readEvents } from '../../../workers/store/events'
import { LEGACY_NEXT_SLOT_KEY, NEXT_SLOT_KEY } from '../../../workers/store/keys'
import { migrateShard } from '../../../workers/store/migrate-shard'
import { tempShard } from '../../helpers/temp-shard'

t.test('time retention drops each tenant\'s old events, whatever the tenant is called', async (t) => {
  const { store } = tempShard(t)
  const tenants = ['demo', 'd', 'a\u0000b', 'x'.repeat(64), '%2F/é']
  await store.env.transaction(() => {
    for (const tenant of tenants) for (let i = 0; i < 5; i++) appendEvent(store, tenant, 'CREATE', 'nodes/core/customer', { i }, undefined, 1000 + i)
  })
  // Events at times 1000..1004: a cutoff of 1003 keeps the last two.
  await store.env.transaction(() => pruneEvents(store, 1003, 1_000_000))
  for (const tenant of tenants) {
    t.same(head(store, tenant), { first: 4, last: 5 }, `${JSON.stringify(tenant)}: the head moved`)
    const read = readEvents(store, tenant, 3, 100)
    t.equal(read.kind === 'events' ? read.events.length : -1, 2, `${JSON.stringify(tenant)}: two events kept`)
    t.equal(readEvents(store, tenant, 0, 100).kind, 'expired', `${JSON.stringify(tenant)}: older ones gone`)
  }
})

t.test('a tenant named "nextSlot" gets a slot of its own, and the old counter moves at the migrating start', async (t) => {
  const shard = tempShard(t)
  let store = shard.store
  // A data directory of an earlier build: the counter under ['nextSlot'].
  await store.env.transaction(() => {
    store.keySlots.putSync(LEGACY_NEXT_SLOT_KEY, 7)
  })
  await shard.reopen()
  store = shard.store
  migrateShard(store, 1, 2)
  t.equal(store.keySlots.get(NEXT_SLOT_KEY), 7, 'the counter moved')
  t.equal(store.keySlots.get(LEGACY_NEXT_SLOT_KEY), undefined, 'and left the name a tenant may have')

  const slots = await store.env.transaction(() => {
    const named = tenantSlot(store, 'nextSlot', true)
    const other = tenantSlot(store, 'demo', true)
    return { named, other, next: newKeySlot(store) }
  })
  t.same(slots, { named: 7, other: 8, next: 9 }, 'slots from the counter, never the counter itself')
  t.equal(store.keySlots.get(NEXT_SLOT_KEY), 10)
})
