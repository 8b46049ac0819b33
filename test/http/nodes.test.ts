// Nodes over HTTP against the real server: PUT/GET/DELETE, properties,
// partial updates, encoded ids, reserved names, list with q and limit, HEAD.
import t from 'tap'
import { Graph, call, createConsent, enc } from '../helpers/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)
let g: Graph
t.before(() => { g = fixture.graph })

type NodeBody = Record<string, unknown>

t.test('PUT creates a node; GET returns the spec fields and custom properties at the top level', async (t) => {
  const before = Date.now()
  const created = await g.put('nodes/core/customer/c1', { name: 'Ann Lee', age: 30 })
  t.equal(created.status, 204)
  t.equal(created.headers['content-length'], undefined, 'no Content-Length on 204')
  t.equal(created.text, '')
  const res = await g.get('nodes/core/customer/c1')
  t.equal(res.status, 200)
  t.match(res.headers['content-type'], /application\/json/)
  const node = res.json<NodeBody>()
  t.equal(node.id, 'c1')
  t.equal(node['consent-reference'], fixture.consent)
  t.equal(node.tenant, 'demo')
  t.equal(node.createdByHybrisClient, 'demo-enricher')
  t.equal(node.schema, `${fixture.server.url}/graph/v1/demo/metamodel/nodes/core/customer`)
  t.ok(typeof node.created === 'number' && node.created >= before - 5000 && node.created <= Date.now() + 5000, 'created is epoch ms')
  t.equal(node.name, 'Ann Lee')
  t.equal(node.age, 30)
})

t.test('partial update: only the named properties change; created and owner stay', async (t) => {
  await g.put('nodes/core/customer/p1', { name: 'A', age: 1, email: 'a@x' })
  const first = (await g.get('nodes/core/customer/p1')).json<NodeBody>()
  t.equal((await g.put('nodes/core/customer/p1', { age: 2, extra: [1, 2] }, { 'consent-reference': fixture.consent })).status, 204)
  const second = (await g.get('nodes/core/customer/p1')).json<NodeBody>()
  t.same({ name: second.name, age: second.age, email: second.email, extra: second.extra }, { name: 'A', age: 2, email: 'a@x', extra: [1, 2] })
  t.equal(second.created, first.created)
  t.equal(second['consent-reference'], fixture.consent)
})

t.test('ids with "/", spaces, @, +, % and Unicode round-trip as one segment', async (t) => {
  for (const id of ['a/b', 'John Doe', 'x@y.z', 'a+b', '100%', 'ünï/cødé ✓']) {
    t.equal((await g.put(`nodes/core/customer/${enc(id)}`, { name: 'X' })).status, 204, `PUT ${id}`)
    const res = await g.get(`nodes/core/customer/${enc(id)}`)
    t.equal(res.status, 200, `GET ${id}`)
    t.equal(res.json<NodeBody>().id, id)
  }
  // "a/b" encoded is a node id; unencoded it is a different route (a property GET of node "a").
  t.equal((await g.get('nodes/core/customer/a/b')).status, 404)
})

t.test('property PUT and GET: the raw JSON value; the node is created when missing', async (t) => {
  t.equal((await g.put('nodes/core/customer/prop1/name', 'Zoe Q')).status, 204)
  const res = await g.get('nodes/core/customer/prop1/name')
  t.equal(res.status, 200)
  t.same(res.json(), 'Zoe Q')
  t.equal((await g.put('nodes/core/customer/prop1/score', 12.5)).status, 204)
  t.same((await g.get('nodes/core/customer/prop1/score')).json(), 12.5)
  t.equal((await g.put('nodes/core/customer/prop1/tags', { a: [true, null] })).status, 204)
  t.same((await g.get('nodes/core/customer/prop1/tags')).json(), { a: [true, null] })
  const node = (await g.get('nodes/core/customer/prop1')).json<NodeBody>()
  t.equal(node.name, 'Zoe Q')
  t.equal(node.score, 12.5)
  t.equal((await g.get('nodes/core/customer/prop1/missing')).status, 404)
  t.equal((await g.get('nodes/core/customer/nope/name')).status, 404)
})

t.test('reserved names (spec 7): 400 for the body list, the property-key list differs', async (t) => {
  for (const name of ['id', 'tid', 'fid', 'label', 'schema', 'created', 'createdByHybrisClient', 'consentReference', 'tenant', 'consent-reference']) {
    const res = await g.put('nodes/core/customer/r1', { [name]: 'x' })
    t.equal(res.status, 400, `body property ${name}`)
    t.equal(res.json<NodeBody>().type, 'validation_violation')
  }
  for (const key of ['id', 'tid', 'fid', 'label', 'schema', 'created', 'consentReference']) {
    t.equal((await g.put(`nodes/core/customer/r1/${key}`, 'x')).status, 400, `property key ${key}`)
  }
  t.equal((await g.put('nodes/core/customer/r1/createdByHybrisClient', 'x')).status, 204, 'createdByHybrisClient is not in the property-key list')
  const node = (await g.get('nodes/core/customer/r1')).json<NodeBody>()
  t.equal(node.createdByHybrisClient, 'demo-enricher', 'the system field is not overwritten')
  t.same((await g.get('nodes/core/customer/r1/createdByHybrisClient')).json(), 'x')
})

t.test('bad input gets a clear 4xx with the error shape and changes nothing', async (t) => {
  await g.put('nodes/core/customer/b1', { name: 'Keep' })
  const cases: [string, Promise<{ status: number; text: string }>, number, string][] = [
    ['malformed JSON', call('PUT', g.url('nodes/core/customer/b1'), { authorization: `Bearer ${g.token}`, 'content-type': 'application/json', 'consent-reference': 'c' }, '{"name": '), 400, 'bad_request'],
    ['array body', g.put('nodes/core/customer/b1', [1, 2]), 400, 'bad_request'],
    ['null body', g.put('nodes/core/customer/b1', null), 400, 'bad_request'],
    ['empty body', call('PUT', g.url('nodes/core/customer/b1'), { authorization: `Bearer ${g.token}`, 'content-type': 'application/json', 'consent-reference': 'c' }, ''), 400, 'bad_request'],
    ['not JSON content type', call('PUT', g.url('nodes/core/customer/b1'), { authorization: `Bearer ${g.token}`, 'content-type': 'text/plain', 'consent-reference': 'c' }, '{"name":"x"}'), 415, 'unsupported_media_type'],
    ['no consent-reference', call('PUT', g.url('nodes/core/customer/b1'), { authorization: `Bearer ${g.token}`, 'content-type': 'application/json' }, '{"name":"x"}'), 400, 'bad_request'],
    ['bad percent-encoding', call('GET', g.url('nodes/core/customer/%E0%A4%A'), { authorization: `Bearer ${g.token}` }), 400, 'bad_request'],
    ['empty id', call('GET', g.url('nodes/core//x'), { authorization: `Bearer ${g.token}` }), 400, 'bad_request'],
    ['id too long', g.get(`nodes/core/customer/${'x'.repeat(400)}`), 400, 'bad_request'],
    ['unknown route', g.get('nodez/core/customer'), 404, 'element_not_found'],
    ['method not allowed', call('PATCH', g.url('nodes/core/customer/b1'), { authorization: `Bearer ${g.token}` }), 405, 'method_not_allowed'],
    ['bad limit', g.get('nodes/core/customer?limit=-1'), 400, 'bad_request'],
    ['bad q', g.get('nodes/core/customer?q=name=John'), 400, 'bad_request'],
    ['q with an infinite number', g.get('nodes/core/customer?q=age:1e999'), 400, 'bad_request'],
    ['q on a non-searchable property', g.get('nodes/core/customer?q=email:%22x%22'), 400, 'validation_violation'],
  ]
  for (const [what, pending, status, type] of cases) {
    const res = await pending
    t.equal(res.status, status, what)
    const body = JSON.parse(res.text) as NodeBody
    t.equal(body.status, status, `${what}: body status`)
    t.equal(body.type, type, `${what}: type`)
    t.ok(typeof body.message === 'string' && (body.message as string).length > 0, `${what}: message`)
    t.match(body.moreInfo, /^http/, `${what}: moreInfo`)
  }
  t.equal((await g.get('nodes/core/customer/b1')).json<NodeBody>().name, 'Keep', 'the node is unchanged')
})

t.test('a body over the limit is 413 and writes nothing', async (t) => {
  const big = { name: 'x'.repeat(1024 * 1024 + 10) }
  const res = await g.put('nodes/core/customer/big', big)
  t.equal(res.status, 413)
  t.equal(JSON.parse(res.text).type, 'payload_too_large')
  t.equal((await g.get('nodes/core/customer/big')).status, 404)
})

t.test('DELETE is idempotent', async (t) => {
  await g.put('nodes/core/customer/d1', { name: 'D' })
  t.equal((await g.delete('nodes/core/customer/d1')).status, 204)
  t.equal((await g.get('nodes/core/customer/d1')).status, 404)
  t.equal((await g.delete('nodes/core/customer/d1')).status, 204)
  t.equal((await g.delete('nodes/core/customer/never')).status, 204)
})

t.test('HEAD counts the nodes of a type in X-Total-Count', async (t) => {
  for (let i = 0; i < 5; i++) await g.put(`nodes/core/product/h${i}`, { title: `T${i}` })
  let res = await g.head('nodes/core/product')
  t.equal(res.status, 200)
  t.equal(res.headers['x-total-count'], '5')
  t.equal(res.text, '')
  await g.delete('nodes/core/product/h0')
  await g.put('nodes/core/product/h1', { title: 'again' })
  res = await g.head('nodes/core/product')
  t.equal(res.headers['x-total-count'], '4', 'delete lowers it, an update does not raise it')
  t.equal((await g.head('nodes/core/unknown')).headers['x-total-count'], '0')
})

t.test('list GET: all nodes, limit, consent-reference filter, q on searchable properties', async (t) => {
  const ownerA = await createConsent(fixture.server.url, 'demo', g.token, 'subject-a')
  const ownerB = await createConsent(fixture.server.url, 'demo', g.token, 'subject-b')
  const lg = new Graph(fixture.server.url, 'demo', g.token, ownerA)
  await lg.put('nodes/list/person/1', { name: 'John Smith', age: 42 })
  await lg.put('nodes/list/person/2', { name: 'Jane Smith', age: 42 })
  await new Graph(fixture.server.url, 'demo', g.token, ownerB).put('nodes/list/person/3', { name: 'John Smith', age: 7 })
  const all = (await lg.get('nodes/list/person')).json<NodeBody[]>()
  t.same(all.map((n) => n.id).sort(), ['1', '2', '3'])
  t.equal((await lg.get('nodes/list/person?limit=2')).json<NodeBody[]>().length, 2)
  t.same((await lg.get('nodes/list/person?limit=0')).json(), [])
  const owned = (await lg.get('nodes/list/person', { 'consent-reference': ownerB })).json<NodeBody[]>()
  t.same(owned.map((n) => n.id), ['3'])
  t.same((await lg.get('nodes/core/customer?limit=1')).status, 200)
  t.same((await lg.get('nodes/list/empty')).json(), [])
})

t.test('q finds nodes through the index and follows updates and deletes', async (t) => {
  await g.put('nodes/core/customer/q1', { name: 'John Smith', age: 42 })
  await g.put('nodes/core/customer/q2', { name: 'John Smith', age: 43 })
  await g.put('nodes/core/customer/q3', { name: 'Other Person', age: 42 })
  const ids = async (q: string): Promise<string[]> =>
    (await g.get(`nodes/core/customer?q=${enc(q)}`)).json<NodeBody[]>().map((n) => n.id as string).sort()
  t.same(await ids('name:"John Smith"'), ['q1', 'q2'])
  t.same((await g.get('nodes/core/customer?q=name:%22John+Smith%22')).json<NodeBody[]>().length, 2, '+ is a space in the query')
  t.same(await ids('age:42'), ['q1', 'q3'])
  t.equal((await g.get(`nodes/core/customer?q=${enc('name:"John Smith"')}&limit=1`)).json<NodeBody[]>().length, 1)
  await g.put('nodes/core/customer/q2', { name: 'Renamed' })
  t.same(await ids('name:"John Smith"'), ['q1'], 'an update moves the index entry')
  t.same(await ids('name:"Renamed"'), ['q2'])
  await g.delete('nodes/core/customer/q1')
  t.same(await ids('name:"John Smith"'), [], 'a delete removes the index entry')
  t.same(await ids('age:99'), [])
})

t.test('the metamodel is readable where schema URLs point', async (t) => {
  const node = (await g.get('nodes/core/customer/c1')).json<NodeBody>()
  const res = await call('GET', node.schema as string, { authorization: `Bearer ${g.token}` })
  t.equal(res.status, 200)
  t.equal(res.json<NodeBody>().owner, 'customer')
  t.equal((await g.get('metamodel')).status, 200)
  t.equal((await g.get('metamodel/nodes/core/nothing')).status, 404)
  t.equal((await g.get('metamodel/relations/core/customer/core/product/core/viewed')).status, 200)
})
