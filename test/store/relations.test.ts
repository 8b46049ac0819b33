// Relation put, read and delete and counters on a real shard: the relation
// is stored once and listed under both end nodes, missing end nodes are
// created, a counter adds one per write and answers the creation times.
import t from 'tap'
import { getNode, putNode } from '../../workers/store/nodes'
import { deleteRelation, getRelation, incrementCounter, putRelation } from '../../workers/store/relations'
import { IN, OUT, adjacencyKey, nodeKey, relationKey, type Key } from '../../workers/store/keys'
import { TENANT_OWNER, grantConsent, revokeConsent, setRevokedProperties } from '../../workers/store/consents'
import { bodyOf, customer, eventsOf, knows, listed, outcome, product, tempShard, viewed, writeCtx, PUBLIC_URL } from '../helpers/temp-shard'

const VIEWED_SCHEMA = `${PUBLIC_URL}/graph/v1/demo/metamodel/relations/core/customer/core/product/core/viewed`

t.test('a put stores the relation once, lists it under both ends and creates missing end nodes', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const rel = viewed('c1', 'p1')
  const r = await s.write((sc) => putRelation(sc, 'demo', rel, { views: 3 }, writeCtx(ref, { trace: 'tr' })))
  t.equal(outcome(r), 204)
  t.equal(s.store.relations.get(relationKey('demo', rel))!.o, ref)
  t.same([...s.store.adjacency.getKeys()] as Key[], [
    adjacencyKey('demo', customer('c1'), product('p1'), OUT, rel.rel),
    adjacencyKey('demo', product('p1'), customer('c1'), IN, rel.rel),
  ])
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), 1)
  t.equal(s.store.counts.get(['demo', 'core', 'product']), 1)
  t.equal(s.store.nodes.get(nodeKey('demo', product('p1')))!.o, TENANT_OWNER, 'a created end node is owned as its type says')
  t.match(bodyOf(getNode(s.context(), 'demo', customer('c1'))), { 'consent-reference': ref, createdByHybrisClient: 'client-1' })
  t.same(bodyOf(getRelation(s.context(), 'demo', rel)), {
    fid: 'c1', tid: 'p1', id: 'r1', schema: VIEWED_SCHEMA,
    fSchema: `${PUBLIC_URL}/graph/v1/demo/metamodel/nodes/core/customer`, tSchema: `${PUBLIC_URL}/graph/v1/demo/metamodel/nodes/core/product`,
    consentReference: ref, created: s.clock.time, createdByHybrisClient: 'client-1', tenant: 'demo', views: 3,
  })
  const events = eventsOf(s.store, 'demo')
  t.same(events.map((e) => e.operation), ['CREATE', 'CREATE', 'CREATE'], 'both end nodes, then the relation')
  t.match(events[2], { id: 'tr', schema: VIEWED_SCHEMA, payload: { consentRefId: ref, fromId: 'c1', toId: 'p1', relationshipId: 'r1' } })
})

t.test('a put on an existing relation merges and is not announced again; existing end nodes are kept', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(ref)))
  const created = s.clock.time
  s.clock.time += 1000
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 1, note: 'x' }, writeCtx(ref)))
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 2 }, writeCtx(ref, { client: 'client-2' })))
  t.match(bodyOf(getRelation(s.context(), 'demo', viewed('c1', 'p1'))), { views: 2, note: 'x', createdByHybrisClient: 'client-1', created: created + 1000 })
  t.match(bodyOf(getNode(s.context(), 'demo', customer('c1'))), { name: 'Ada', created }, 'the end node is left as it was')
  t.equal(s.store.adjacency.getKeysCount(), 2)
  t.same(eventsOf(s.store, 'demo').map((e) => e.operation), ['CREATE', 'CREATE', 'CREATE'], 'c1, p1, the relation')
  t.equal(outcome(getRelation(s.context(), 'demo', viewed('c1', 'p2'))), 'element_not_found')
})

t.test('relations of the same ends differ by relation id and type', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => {
    putRelation(sc, 'demo', viewed('c1', 'p1', 'a'), { views: 1 }, writeCtx(ref))
    putRelation(sc, 'demo', viewed('c1', 'p1', 'b'), { views: 2 }, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('c1'), product('p1'), 'a'), {}, writeCtx(ref))
  })
  t.equal(s.store.relations.getKeysCount(), 3)
  t.equal(s.store.adjacency.getKeysCount(), 6)
  await s.write((sc) => deleteRelation(sc, 'demo', viewed('c1', 'p1', 'a'), undefined))
  t.match(bodyOf(getRelation(s.context(), 'demo', viewed('c1', 'p1', 'b'))), { views: 2 })
  t.equal(outcome(getRelation(s.context(), 'demo', knows(customer('c1'), product('p1'), 'a'))), 200)
  t.equal(s.store.adjacency.getKeysCount(), 4)
})

t.test('a delete removes the relation and both adjacency entries; the end nodes stay; it is idempotent', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), {}, writeCtx(ref)))
  t.equal(outcome(await s.write((sc) => deleteRelation(sc, 'demo', viewed('c1', 'p1'), 'tr-del'))), 204)
  t.equal(s.store.relations.getKeysCount(), 0)
  t.equal(s.store.adjacency.getKeysCount(), 0)
  t.equal(s.store.nodes.getKeysCount(), 2)
  t.equal(outcome(getRelation(s.context(), 'demo', viewed('c1', 'p1'))), 'element_not_found')
  const last = eventsOf(s.store, 'demo').at(-1)
  t.match(last, { id: 'tr-del', operation: 'DELETE', schema: VIEWED_SCHEMA, payload: { consentRefId: ref, fromId: 'c1', toId: 'p1', relationshipId: 'r1' } })
  const n = eventsOf(s.store, 'demo').length
  t.equal(outcome(await s.write((sc) => deleteRelation(sc, 'demo', viewed('c1', 'p1'), undefined))), 204)
  t.equal(eventsOf(s.store, 'demo').length, n, 'deleting what is not there is not an event')
})

t.test('a self-relation has both adjacency entries under its node; deleting it removes both', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const self = knows(customer('c1'), customer('c1'), 'me')
  await s.write((sc) => putRelation(sc, 'demo', self, {}, writeCtx(ref)))
  t.same([...s.store.adjacency.getKeys()] as Key[], [
    adjacencyKey('demo', customer('c1'), customer('c1'), OUT, self.rel),
    adjacencyKey('demo', customer('c1'), customer('c1'), IN, self.rel),
  ])
  await s.write((sc) => deleteRelation(sc, 'demo', self, undefined))
  t.equal(s.store.adjacency.getKeysCount(), 0)
  t.equal(s.store.nodes.getKeysCount(), 1)
})

t.test('relation ownership follows the metamodel, like nodes', async (t) => {
  const s = tempShard(t)
  const a = await s.consent('demo', 'alice')
  const b = await s.consent('demo', 'bob')
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), {}, writeCtx(a)))
  t.match(await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 9 }, writeCtx(b))), { kind: 'error', type: 'forbidden', message: /owned by another consent reference/ })
  t.equal(outcome(await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'views', writeCtx(b)))), 'forbidden')
  t.equal(outcome(await s.write((sc) => putRelation(sc, 'demo', listed('p1', 'p2'), { a: 1 }, writeCtx(a)))), 204)
  t.equal(outcome(await s.write((sc) => putRelation(sc, 'demo', listed('p1', 'p2'), { b: 2 }, writeCtx(b)))), 204, 'tenant-owned: any consent')
  t.match(bodyOf(getRelation(s.context(), 'demo', listed('p1', 'p2'))), { consentReference: TENANT_OWNER, a: 1, b: 2 })
  const refused = await s.write((sc) => putRelation(sc, 'demo', viewed('c9', 'p9'), {}, writeCtx('cr_unknown')))
  t.equal(outcome(refused), 'forbidden')
  t.equal(s.store.nodes.get(nodeKey('demo', customer('c9'))), undefined, 'a refused relation creates no end node')
})

t.test('a counter starts at one, adds one per write, and answers the three creation times', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const t0 = s.clock.time
  await s.write((sc) => putNode(sc, 'demo', product('p1'), {}, writeCtx(ref)))
  s.clock.time += 1000
  const first = await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'views', writeCtx(ref)))
  t.equal(outcome(first), 200)
  t.match(bodyOf(first), { fid: 'c1', tid: 'p1', id: 'r1', views: 1, toCreated: t0, fromCreated: t0 + 1000, relationCreated: t0 + 1000 })
  s.clock.time += 1000
  const results = await s.write((sc) => [1, 2, 3].map(() => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'views', writeCtx(ref))))
  t.same(results.map((r) => (bodyOf(r) as { views: number }).views), [2, 3, 4], 'each write of a batch sees the one before it')
  t.match(bodyOf(getRelation(s.context(), 'demo', viewed('c1', 'p1'))), { views: 4, created: t0 + 1000 })
  const other = await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'clicks', writeCtx(ref)))
  t.match(bodyOf(other), { views: 4, clicks: 1 })
})

t.test('a counter over a property that is not an integer is refused and changes nothing', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 'many', ratio: 1.5 }, writeCtx(ref)))
  t.match(await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'views', writeCtx(ref))), { kind: 'error', type: 'validation_violation', message: /"views" .* is not an integer counter/ })
  t.equal(outcome(await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'ratio', writeCtx(ref)))), 'validation_violation')
  t.match(bodyOf(getRelation(s.context(), 'demo', viewed('c1', 'p1'))), { views: 'many', ratio: 1.5 })
})

t.test('a counter answer hides properties whose consent is revoked; the revoked counter itself is refused', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), { secret: 's', views: 1 }, writeCtx(ref)))
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, ['secret', 'hidden'], { kind: 'tenant' }))
  const r = await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'views', writeCtx(ref)))
  const body = bodyOf(r) as Record<string, unknown>
  t.equal(body.views, 2)
  t.notOk('secret' in body)
  t.match(await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'hidden', writeCtx(ref))), { kind: 'error', type: 'forbidden', message: /"hidden"/ })
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, [], { kind: 'tenant' }))
  t.match(bodyOf(getRelation(s.context(), 'demo', viewed('c1', 'p1'))), { secret: 's', views: 2 }, 'the hidden property was kept')
})

t.test('a locked relation written again starts afresh; its counter restarts', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 7, note: 'old' }, writeCtx(ref)))
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, { kind: 'tenant' }, sc.shred))
  await s.write((sc) => grantConsent(sc.store, 'demo', ref, { kind: 'tenant' }))
  t.match(getRelation(s.context(), 'demo', viewed('c1', 'p1')), { kind: 'ok', body: '{"LOCKED":true}' })
  const r = await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'views', writeCtx(ref)))
  const body = bodyOf(r) as Record<string, unknown>
  t.equal(body.views, 1)
  t.notOk('note' in body, 'the locked properties are dropped')
  t.equal(s.store.adjacency.getKeysCount(), 2, 'still one relation, listed twice')
  t.equal(eventsOf(s.store, 'demo').filter((e) => e.operation === 'CREATE').length, 3, 'not created again')
})

t.test('system fields of a relation win over custom properties of the same name', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p1'), { fSchema: 'x', toCreated: 1, views: 0 }, writeCtx(ref)))
  const rel = bodyOf(getRelation(s.context(), 'demo', viewed('c1', 'p1'))) as Record<string, unknown>
  t.equal(rel.fSchema, `${PUBLIC_URL}/graph/v1/demo/metamodel/nodes/core/customer`)
  t.notOk('toCreated' in rel)
  t.equal(rel.views, 0)
  const counted = (await s.write((sc) => incrementCounter(sc, 'demo', viewed('c1', 'p1'), 'views', writeCtx(ref)))) as { body: string }
  t.equal(counted.body.split('"toCreated"').length, 2, 'the counter answer has toCreated once')
  t.equal((JSON.parse(counted.body) as { toCreated: number }).toCreated, s.clock.time)
})
