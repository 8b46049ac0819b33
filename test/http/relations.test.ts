// Relations and counters over HTTP: end nodes created on demand, partial
// updates, idempotent deletes, cascade on node delete, atomic counters.
import t from 'tap'
import { Graph, enc, pool } from '../helpers/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)
let g: Graph
t.before(() => { g = fixture.graph })

type Body = Record<string, unknown>
const rel = (from: string, to: string, id: string, type = 'viewed'): string =>
  `core/customer/${enc(from)}/core/product/${enc(to)}/core/${type}/${enc(id)}`

t.test('PUT relation creates missing end nodes; GET returns the spec fields', async (t) => {
  t.equal((await g.put(`relations/${rel('u1', 'p1', 'r1')}`, { views: 1, note: 'first' })).status, 204)
  const res = await g.get(`relations/${rel('u1', 'p1', 'r1')}`)
  t.equal(res.status, 200)
  const r = res.json<Body>()
  t.equal(r.fid, 'u1')
  t.equal(r.tid, 'p1')
  t.equal(r.id, 'r1')
  t.equal(r.schema, `${fixture.server.url}/graph/v1/demo/metamodel/relations/core/customer/core/product/core/viewed`)
  t.equal(r.fSchema, `${fixture.server.url}/graph/v1/demo/metamodel/nodes/core/customer`)
  t.equal(r.tSchema, `${fixture.server.url}/graph/v1/demo/metamodel/nodes/core/product`)
  t.equal(r.consentReference, fixture.consent)
  t.equal(r.createdByHybrisClient, 'demo-enricher')
  t.equal(r.tenant, 'demo')
  t.type(r.created, 'number')
  t.equal(r.views, 1)
  t.equal(r.note, 'first')
  t.equal((await g.get('nodes/core/customer/u1')).status, 200, 'source node created')
  t.equal((await g.get('nodes/core/product/p1')).status, 200, 'target node created')
})

t.test('PUT relation again appends and overwrites only the named properties', async (t) => {
  const before = (await g.get(`relations/${rel('u1', 'p1', 'r1')}`)).json<Body>()
  t.equal((await g.put(`relations/${rel('u1', 'p1', 'r1')}`, { views: 5, lastSeen: 7 })).status, 204)
  const after = (await g.get(`relations/${rel('u1', 'p1', 'r1')}`)).json<Body>()
  t.same([after.views, after.note, after.lastSeen], [5, 'first', 7])
  t.equal(after.created, before.created)
})

t.test('reserved names in a relation body are 400', async (t) => {
  for (const name of ['id', 'tid', 'fid', 'label', 'schema', 'created', 'createdByHybrisClient', 'consentReference']) {
    t.equal((await g.put(`relations/${rel('u1', 'p1', 'r1')}`, { [name]: 1 })).status, 400, name)
  }
  // Fields of the relation object and the counter answer would collide too.
  for (const name of ['fSchema', 'tSchema', 'toCreated', 'fromCreated', 'relationCreated', 'tenant', 'consent-reference']) {
    t.equal((await g.put(`relations/${rel('u1', 'p1', 'r1')}`, { [name]: 1 })).status, 400, name)
  }
})

t.test('relation ids with "/" and spaces are one segment each', async (t) => {
  const path = `relations/${rel('a/b c', 'p/2', 'r/1 x')}`
  t.equal((await g.put(path, {})).status, 204)
  const r = (await g.get(path)).json<Body>()
  t.same([r.fid, r.tid, r.id], ['a/b c', 'p/2', 'r/1 x'])
})

t.test('DELETE relation is idempotent and keeps the end nodes', async (t) => {
  await g.put(`relations/${rel('u2', 'p2', 'r1')}`, {})
  t.equal((await g.delete(`relations/${rel('u2', 'p2', 'r1')}`)).status, 204)
  t.equal((await g.get(`relations/${rel('u2', 'p2', 'r1')}`)).status, 404)
  t.equal((await g.delete(`relations/${rel('u2', 'p2', 'r1')}`)).status, 204)
  t.equal((await g.get('nodes/core/customer/u2')).status, 200)
  t.equal((await g.get('nodes/core/product/p2')).status, 200)
})

t.test('deleting a node removes its relations in both directions', async (t) => {
  await g.put(`relations/${rel('hub', 'p3', 'out1')}`, {})
  await g.put('relations/core/customer/other/core/customer/hub/core/knows/in1', {})
  await g.put('relations/core/customer/hub/core/customer/hub/core/knows/self', {})
  t.equal((await g.delete('nodes/core/customer/hub')).status, 204)
  t.equal((await g.get(`relations/${rel('hub', 'p3', 'out1')}`)).status, 404)
  t.equal((await g.get('relations/core/customer/other/core/customer/hub/core/knows/in1')).status, 404)
  t.equal((await g.get('relations/core/customer/hub/core/customer/hub/core/knows/self')).status, 404)
  const chunks = (await g.get('neighbours/core/product/p3')).json<Body[]>()
  t.equal(chunks.length, 1, 'the far node no longer lists the deleted node')
  t.equal((await g.get('neighbours/core/customer/other')).json<Body[]>().length, 1)
})

t.test('POST counter creates nodes and relation, answers the counter result', async (t) => {
  const res = await g.post(`counters/${rel('cu', 'cp', 'cr')}/views`)
  t.equal(res.status, 200)
  const c = res.json<Body>()
  t.equal(c.views, 1)
  t.same([c.fid, c.tid, c.id, c.tenant], ['cu', 'cp', 'cr', 'demo'])
  for (const f of ['toCreated', 'fromCreated', 'relationCreated', 'created']) t.type(c[f], 'number', f)
  t.equal((await g.post(`counters/${rel('cu', 'cp', 'cr')}/views`)).json<Body>().views, 2)
  t.equal((await g.get(`relations/${rel('cu', 'cp', 'cr')}`)).json<Body>().views, 2)
})

t.test('counter errors: reserved name, a non-integer property, no consent reference', async (t) => {
  t.equal((await g.post(`counters/${rel('cu', 'cp', 'cr')}/created`)).status, 400)
  t.equal((await g.post(`counters/${rel('cu', 'cp', 'cr')}/toCreated`)).status, 400)
  await g.put(`relations/${rel('cu', 'cp', 'cr')}`, { label2: 'text' })
  const res = await g.post(`counters/${rel('cu', 'cp', 'cr')}/label2`)
  t.equal(res.status, 400)
  t.equal(res.json<Body>().type, 'validation_violation')
  t.equal((await g.get(`relations/${rel('cu', 'cp', 'cr')}`)).json<Body>().label2, 'text', 'unchanged')
  const noConsent = await g.post(`counters/${rel('cu', 'cp', 'cr')}/views`, { 'consent-reference': '' })
  t.equal(noConsent.status, 400)
})

t.test('1,000 concurrent POSTs on one counter end at exactly 1,000', async (t) => {
  const path = `counters/${rel('hot', 'hp', 'hr')}/views`
  const statuses = await pool(1000, 200, async () => (await g.post(path)).status)
  t.equal(statuses.filter((s) => s === 200).length, 1000, 'every increment acknowledged')
  t.equal((await g.get(`relations/${rel('hot', 'hp', 'hr')}`)).json<Body>().views, 1000)
})

t.test('concurrent counters on many relations of one tenant stay exact', async (t) => {
  await pool(500, 100, (i) => g.post(`counters/${rel('m', `p${i % 10}`, 'r')}/views`))
  for (let p = 0; p < 10; p++) {
    t.equal((await g.get(`relations/${rel('m', `p${p}`, 'r')}`)).json<Body>().views, 50, `p${p}`)
  }
})
