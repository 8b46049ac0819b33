// Node put, read, count and delete on a real shard: what is stored, the
// counts and events they keep, and that a delete leaves no adjacency entry
// or index term behind, self-relations included.
import t from 'tap'
import { countNodes, deleteNode, ensureNode, getNode, getNodeProperty, putNode, putNodeProperty } from '../../workers/store/nodes'
import { putRelation } from '../../workers/store/relations'
import { adjacencyPrefix, nodeKey, relationKey, END, type Key } from '../../workers/store/keys'
import { TENANT_OWNER } from '../../workers/store/consents'
import { setRevokedProperties } from '../../workers/store/consents'
import type { ShardStore } from '../../workers/store/shard-store'
import type { NodeRef } from '../../src/contract/messages'
import { bodyOf, customer, eventsOf, knows, outcome, product, tempShard, viewed, writeCtx, PUBLIC_URL } from '../helpers/temp-shard'

const adjacencyOf = (store: ShardStore, tenant: string, n: NodeRef): Key[] => {
  const prefix = adjacencyPrefix(tenant, n)
  return [...store.adjacency.getKeys({ start: prefix, end: [...prefix, END] })] as Key[]
}
const allKeys = (db: { getKeys(): Iterable<unknown> }): Key[] => [...db.getKeys()] as Key[]

t.test('a put creates the node: stored sealed, counted, announced, rendered', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const r = await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada', age: 36 }, writeCtx(ref, { trace: 'trace-1' })))
  t.equal(outcome(r), 204)
  const stored = s.store.nodes.get(nodeKey('demo', customer('c1')))!
  t.equal(stored.o, ref, 'owned by the consent that wrote it')
  t.equal(stored.c, s.clock.time)
  t.equal(stored.b, 'client-1')
  t.notOk(Buffer.from(stored.s).toString('latin1').includes('Ada'), 'no plaintext on disk')
  const count = countNodes(s.context(), 'demo', 'core', 'customer')
  t.equal(count.kind === 'ok' ? count.total : undefined, 1)
  t.same(bodyOf(getNode(s.context(), 'demo', customer('c1'))), {
    id: 'c1', 'consent-reference': ref, created: s.clock.time, createdByHybrisClient: 'client-1', tenant: 'demo',
    schema: `${PUBLIC_URL}/graph/v1/demo/metamodel/nodes/core/customer`, name: 'Ada', age: 36,
  })
  const events = eventsOf(s.store, 'demo')
  t.equal(events.length, 1)
  t.match(events[0], { id: 'trace-1', sequence: 1, operation: 'CREATE', schema: `${PUBLIC_URL}/graph/v1/demo/metamodel/nodes/core/customer`, payload: { id: 'c1', consentRefId: ref } })
})

t.test('a second put merges properties, keeps created and creator, and is not counted or announced again', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada', age: 36 }, writeCtx(ref)))
  const created = s.clock.time
  s.clock.time += 5000
  t.equal(outcome(await s.write((sc) => putNode(sc, 'demo', customer('c1'), { age: 37, email: 'a@x' }, writeCtx(ref, { client: 'client-2' })))), 204)
  t.equal(outcome(await s.write((sc) => putNodeProperty(sc, 'demo', customer('c1'), 'name', 'Ada L.', writeCtx(ref)))), 204)
  t.match(bodyOf(getNode(s.context(), 'demo', customer('c1'))), { created, createdByHybrisClient: 'client-1', name: 'Ada L.', age: 37, email: 'a@x' })
  t.same(bodyOf(getNodeProperty(s.context(), 'demo', customer('c1'), 'age')), 37)
  t.equal(outcome(getNodeProperty(s.context(), 'demo', customer('c1'), 'nothing')), 'element_not_found')
  t.equal(outcome(getNodeProperty(s.context(), 'demo', customer('c2'), 'age')), 'element_not_found')
  t.equal(outcome(getNode(s.context(), 'demo', customer('c2'))), 'element_not_found')
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), 1)
  t.equal(eventsOf(s.store, 'demo').length, 1, 'only the creation is an event')
})

t.test('who may write: the owning consent for customer data, any consent for tenant data', async (t) => {
  const s = tempShard(t)
  const a = await s.consent('demo', 'alice')
  const b = await s.consent('demo', 'bob')
  const other = await s.consent('other')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(a)))
  const byB = await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Bob' }, writeCtx(b)))
  t.match(byB, { kind: 'error', type: 'forbidden', message: /owned by another consent reference/ })
  const unknown = await s.write((sc) => putNode(sc, 'demo', customer('c2'), {}, writeCtx('cr_nothing')))
  t.match(unknown, { kind: 'error', type: 'forbidden', message: /not a consent of tenant "demo"/ })
  const otherTenant = await s.write((sc) => putNode(sc, 'demo', customer('c3'), {}, writeCtx(other)))
  t.equal(outcome(otherTenant), 'forbidden', "a consent of another tenant is no consent here")
  t.equal(s.store.nodes.get(nodeKey('demo', customer('c2'))), undefined, 'a refused write stores nothing')
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), 1)

  t.equal(outcome(await s.write((sc) => putNode(sc, 'demo', product('p1'), { title: 'Lamp' }, writeCtx(a)))), 204)
  t.equal(outcome(await s.write((sc) => putNode(sc, 'demo', product('p1'), { price: 3 }, writeCtx(b)))), 204)
  t.equal(s.store.nodes.get(nodeKey('demo', product('p1')))!.o, TENANT_OWNER)
  t.match(bodyOf(getNode(s.context(), 'demo', product('p1'))), { 'consent-reference': TENANT_OWNER, title: 'Lamp', price: 3 })
})

t.test('a property whose consent is revoked is hidden from reads and refused on writes', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada', email: 'a@x' }, writeCtx(ref)))
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, ['email'], { kind: 'tenant' }))
  const node = bodyOf(getNode(s.context(), 'demo', customer('c1'))) as Record<string, unknown>
  t.equal(node.name, 'Ada')
  t.notOk('email' in node)
  t.match(getNodeProperty(s.context(), 'demo', customer('c1'), 'email'), { kind: 'error', type: 'consent_revoked', message: /property "email"/ })
  const w = await s.write((sc) => putNodeProperty(sc, 'demo', customer('c1'), 'email', 'b@x', writeCtx(ref)))
  t.match(w, { kind: 'error', type: 'forbidden', message: /property "email" is revoked/ })
  t.equal(outcome(await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada L.' }, writeCtx(ref)))), 204)
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, [], { kind: 'tenant' }))
  t.match(bodyOf(getNode(s.context(), 'demo', customer('c1'))), { name: 'Ada L.', email: 'a@x' }, 'a write merges with the hidden property, never drops it')
})

t.test('a delete removes the node, its count, its index terms and every relation in both directions', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const c1 = customer('c1')
  await s.write((sc) => {
    putNode(sc, 'demo', c1, { name: 'Ada', age: 36 }, writeCtx(ref))
    putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 1 }, writeCtx(ref))
    putRelation(sc, 'demo', viewed('c1', 'p2'), {}, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('c2'), c1), {}, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('c2'), customer('c3')), {}, writeCtx(ref))
  })
  t.equal(adjacencyOf(s.store, 'demo', c1).length, 3)
  t.equal(allKeys(s.store.index).length, 2, 'name and age are indexed')
  const before = eventsOf(s.store, 'demo').length

  t.equal(outcome(await s.write((sc) => deleteNode(sc, 'demo', c1, 'trace-d'))), 204)
  t.equal(s.store.nodes.get(nodeKey('demo', c1)), undefined)
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), 2, 'c2 and c3 remain')
  t.same(allKeys(s.store.index), [], 'no index term is left')
  t.same(adjacencyOf(s.store, 'demo', c1), [])
  t.same(adjacencyOf(s.store, 'demo', product('p1')), [], "the far ends' entries are gone")
  t.same(adjacencyOf(s.store, 'demo', product('p2')), [])
  t.equal(adjacencyOf(s.store, 'demo', customer('c2')).length, 1, 'only c2 -> c3 is left for c2')
  t.equal(s.store.relations.get(relationKey('demo', viewed('c1', 'p1'))), undefined)
  t.equal(s.store.relations.get(relationKey('demo', knows(customer('c2'), c1))), undefined)
  t.ok(s.store.relations.get(relationKey('demo', knows(customer('c2'), customer('c3')))))
  t.equal(allKeys(s.store.relations).length, 1)
  t.ok(s.store.nodes.get(nodeKey('demo', product('p1'))), 'neighbours stay')

  const events = eventsOf(s.store, 'demo').slice(before)
  t.same(events.map((e) => e.operation), ['DELETE', 'DELETE', 'DELETE', 'DELETE'])
  t.same(events.map((e) => e.id), ['trace-d', 'trace-d', 'trace-d', 'trace-d'])
  t.match(events[3], { schema: `${PUBLIC_URL}/graph/v1/demo/metamodel/nodes/core/customer`, payload: { id: 'c1', consentRefId: ref } })
  t.same(events.slice(0, 3).map((e) => e.payload.relationshipId), ['r1', 'r1', 'r1'])
})

t.test('a self-relation is removed once, with one event, on node delete', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const c1 = customer('c1')
  await s.write((sc) => putRelation(sc, 'demo', knows(c1, c1, 'me'), {}, writeCtx(ref)))
  t.equal(adjacencyOf(s.store, 'demo', c1).length, 2, 'listed under both directions of its own node')
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), 1, 'the end node is created once')
  const before = eventsOf(s.store, 'demo').length
  await s.write((sc) => deleteNode(sc, 'demo', c1, undefined))
  t.same(adjacencyOf(s.store, 'demo', c1), [])
  t.same(allKeys(s.store.relations), [])
  t.same(eventsOf(s.store, 'demo').slice(before).map((e) => [e.operation, e.payload.relationshipId ?? e.payload.id]), [['DELETE', 'me'], ['DELETE', 'c1']])
})

t.test('deleting a missing node is a silent 204; a node deleted and put again starts afresh', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  t.equal(outcome(await s.write((sc) => deleteNode(sc, 'demo', customer('nobody'), undefined))), 204)
  t.same(eventsOf(s.store, 'demo'), [], 'no event for nothing deleted')
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), undefined)
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(ref)))
  await s.write((sc) => deleteNode(sc, 'demo', customer('c1'), undefined))
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), undefined, 'a count of zero is removed, not stored')
  const count = countNodes(s.context(), 'demo', 'core', 'customer')
  t.equal(count.kind === 'ok' ? count.total : undefined, 0)
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { age: 5 }, writeCtx(ref)))
  const node = bodyOf(getNode(s.context(), 'demo', customer('c1'))) as Record<string, unknown>
  t.equal(node.age, 5)
  t.notOk('name' in node, 'nothing of the deleted node comes back')
})

t.test('tenants are apart: the same ids in two tenants are two nodes', async (t) => {
  const s = tempShard(t)
  const a = await s.consent('a')
  const b = await s.consent('b')
  await s.write((sc) => {
    putNode(sc, 'a', customer('c1'), { name: 'A' }, writeCtx(a))
    putNode(sc, 'b', customer('c1'), { name: 'B' }, writeCtx(b))
  })
  await s.write((sc) => deleteNode(sc, 'a', customer('c1'), undefined))
  t.match(bodyOf(getNode(s.context(), 'b', customer('c1'))), { name: 'B', tenant: 'b' })
  t.equal(s.store.counts.get(['b', 'core', 'customer']), 1)
  t.equal(eventsOf(s.store, 'a').length, 2)
  t.equal(eventsOf(s.store, 'b').length, 1)
})

t.test('a property stored under a system field name never replaces the system field in the object form', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  // Spec 7 does not reserve createdByHybrisClient for the property PUT.
  await s.write((sc) => putNodeProperty(sc, 'demo', customer('c1'), 'createdByHybrisClient', 'spoofed', writeCtx(ref)))
  await s.write((sc) => putNodeProperty(sc, 'demo', customer('c1'), 'name', 'Ada', writeCtx(ref)))
  const text = (getNode(s.context(), 'demo', customer('c1')) as { body: string }).body
  t.equal(text.split('createdByHybrisClient').length, 2, 'the field appears once')
  t.match(JSON.parse(text), { createdByHybrisClient: 'client-1', name: 'Ada' })
  t.same(bodyOf(getNodeProperty(s.context(), 'demo', customer('c1'), 'createdByHybrisClient')), 'spoofed', 'the property itself reads back')
})

t.test('ensureNode answers the node (created or found) or the refusal, told apart by kind', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  s.clock.time = 5_000
  const created = await s.write((sc) => ensureNode(sc, 'demo', customer('e1'), writeCtx(ref, { client: 'cl' })))
  t.strictSame(created, { kind: 'node', meta: { c: 5_000, b: 'cl', o: ref } })
  s.clock.time = 6_000
  const found = await s.write((sc) => ensureNode(sc, 'demo', customer('e1'), writeCtx(ref)))
  t.strictSame(found, { kind: 'node', meta: { c: 5_000, b: 'cl', o: ref } }, 'an existing node is left as it is')
  const refused = await s.write((sc) => ensureNode(sc, 'demo', customer('e2'), writeCtx('cr_unknown')))
  t.match(refused, { kind: 'error', type: 'forbidden' })
})
