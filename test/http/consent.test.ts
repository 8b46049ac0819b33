// Consent, ownership, metamodel enforcement and revocation over HTTP (spec
// 1.4, 1.6, 1.7, 1.8 and section 3), against the real server.
import t from 'tap'
import { Graph, call, createConsent, enc } from '../helpers/client'
import { serverForFile, type Server } from '../helpers/server'

const fixture = serverForFile(t)
let server: Server
let token: string

t.before(() => {
  server = fixture.server
  token = fixture.token
})

type Body = Record<string, unknown>
const consentUrl = (ref: string, suffix = ''): string => `${server.url}/graph/v1/demo/consents/${enc(ref)}${suffix}`
const auth = (): Record<string, string> => ({ authorization: `Bearer ${token}` })
async function newGraph(subject: string): Promise<Graph> {
  return new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, subject))
}
const revoke = (ref: string) => call('DELETE', consentUrl(ref), auth())
const grant = (ref: string) => call('POST', consentUrl(ref, '/grant'), auth())

t.test('consent references: create, read, unknown', async (t) => {
  const res = await call('POST', `${server.url}/graph/v1/demo/consents`, { ...auth(), 'content-type': 'application/json' }, JSON.stringify({ subject: 'alice' }))
  t.equal(res.status, 201)
  const ref = res.json<Body>().consentReference as string
  t.match(ref, /^cr_[A-Za-z0-9_-]{22}$/, '128 random bits')
  const again = await createConsent(server.url, 'demo', token, 'alice')
  t.not(again, ref, 'each creation is a new reference')
  const read = await call('GET', consentUrl(ref), auth())
  t.equal(read.status, 200)
  t.same(read.json(), { consentReference: ref, subject: 'alice', status: 'granted', revokedProperties: [] })
  t.equal((await call('GET', consentUrl('cr_unknown'), auth())).status, 404)
  for (const body of ['{}', '{"subject":""}', '[]', '{"subject":5}']) {
    const bad = await call('POST', `${server.url}/graph/v1/demo/consents`, { ...auth(), 'content-type': 'application/json' }, body)
    t.equal(bad.status, 400, body)
  }
  const viewOnly = await call('POST', `${server.url}/oauth2/v1/token`, {
    authorization: `Basic ${Buffer.from('demo-enricher:demo-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded',
  }, 'grant_type=client_credentials&scope=platform.profile_graph_view')
  const viewToken = viewOnly.json<Body>().access_token as string
  const refused = await call('POST', `${server.url}/graph/v1/demo/consents`, { authorization: `Bearer ${viewToken}`, 'content-type': 'application/json' }, '{"subject":"x"}')
  t.equal(refused.status, 403, 'only a manage-scope token creates consents')
})

t.test('writes need a granted consent reference of this tenant; otherwise 403 and nothing changes', async (t) => {
  const g = await newGraph('bob')
  t.equal((await g.put('nodes/core/customer/w1', { name: 'Kept' })).status, 204)
  const unknown = await g.put('nodes/core/customer/w1', { name: 'X' }, { 'consent-reference': 'cr_not_a_consent' })
  t.equal(unknown.status, 403)
  t.equal(unknown.json<Body>().type, 'forbidden')
  t.equal((await g.put('nodes/core/customer/w2', { name: 'X' }, { 'consent-reference': 'cr_not_a_consent' })).status, 403)
  t.equal((await g.get('nodes/core/customer/w2')).status, 404, 'no node was created')
  const acmeToken = (await call('POST', `${server.url}/oauth2/v1/token`, {
    authorization: `Basic ${Buffer.from('demo-enricher:demo-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded',
  }, 'grant_type=client_credentials&scope=platform.tenant%3Dacme')).json<Body>().access_token as string
  const acmeRef = await createConsent(server.url, 'acme', acmeToken, 'bob')
  t.equal((await g.put('nodes/core/customer/w1', { name: 'X' }, { 'consent-reference': acmeRef })).status, 403, "another tenant's reference")
  t.equal((await g.get('nodes/core/customer/w1')).json<Body>().name, 'Kept')
})

t.test('ownership: customer-owned data is written only with the reference that created it', async (t) => {
  const a = await newGraph('owner-a')
  const b = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'owner-b'))
  await a.put('nodes/core/customer/o1', { name: 'Mine' })
  const rel = 'core/customer/o1/core/product/po/core/viewed/ro'
  await a.put(`relations/${rel}`, { views: 1 })
  for (const [what, res] of [
    ['node PUT', await b.put('nodes/core/customer/o1', { name: 'Theirs' })],
    ['property PUT', await b.put('nodes/core/customer/o1/name', 'Theirs')],
    ['relation PUT', await b.put(`relations/${rel}`, { views: 9 })],
    ['counter POST', await b.post(`counters/${rel}/views`)],
  ] as const) {
    t.equal(res.status, 403, what)
    t.equal(res.json<Body>().type, 'forbidden', what)
  }
  t.equal((await a.get('nodes/core/customer/o1')).json<Body>().name, 'Mine')
  t.equal((await a.get(`relations/${rel}`)).json<Body>().views, 1)
  t.equal((await a.post(`counters/${rel}/views`)).json<Body>().views, 2, 'the owner still writes')
  t.equal((await b.get('nodes/core/customer/o1')).status, 200, 'reads need no consent reference')
  t.equal((await b.delete('nodes/core/customer/o1')).status, 204, 'neither does DELETE')
})

t.test('tenant-owned types accept any valid reference of the tenant and show TENANT', async (t) => {
  const a = await newGraph('ta')
  const b = await newGraph('tb')
  t.equal((await a.put('nodes/core/product/tp1', { title: 'Shoe' })).status, 204)
  t.equal((await b.put('nodes/core/product/tp1', { price: 9.5 })).status, 204)
  const node = (await a.get('nodes/core/product/tp1')).json<Body>()
  t.equal(node['consent-reference'], 'TENANT')
  t.same([node.title, node.price], ['Shoe', 9.5])
  await a.put('relations/core/product/tp1/core/product/tp2/core/bundles/b1', { count: 1 })
  t.equal((await b.post('counters/core/product/tp1/core/product/tp2/core/bundles/b1/count')).json<Body>().count, 2)
  t.equal((await a.get('relations/core/product/tp1/core/product/tp2/core/bundles/b1')).json<Body>().consentReference, 'TENANT')
  await revoke(a.consent)
  t.equal((await b.get('nodes/core/product/tp1')).status, 200, "a customer's revocation does not lock tenant data")
  t.equal((await a.put('nodes/core/product/tp1', { title: 'X' })).status, 403, 'but a revoked reference cannot write it')
})

t.test('metamodel: undeclared types and properties, wrong value types, counters', async (t) => {
  const g = await newGraph('mm')
  const cases: [string, Promise<{ status: number; text: string }>, RegExp][] = [
    ['undeclared node type', g.put('nodes/core/unknown/x', {}), /node type core\/unknown is not declared/],
    ['undeclared property of a closed type', g.put('nodes/closed/thing/x', { nope: 1 }), /property "nope" is not declared/],
    ['wrong value type', g.put('nodes/closed/thing/x', { count: 'many' }), /"count" .* must be of type integer/],
    ['property PUT on a closed type', g.put('nodes/closed/thing/x/nope', 1), /property "nope" is not declared/],
    ['undeclared relation type', g.put('relations/core/customer/a/core/product/b/core/hates/r', {}), /relation type .* is not declared/],
    ['relation to an undeclared node type', g.put('relations/core/customer/a/core/unknown/b/core/viewed/r', {}), /node type core\/unknown is not declared/],
    ['undeclared counter', g.post('counters/core/customer/a/core/product/b/core/viewed/r/clicks'), /counter "clicks" must be a declared integer/],
    ['q on a non-searchable property', g.get('nodes/core/customer?q=email:%22x%22'), /not searchable/],
  ]
  for (const [what, pending, message] of cases) {
    const res = await pending
    t.equal(res.status, 400, what)
    const body = JSON.parse(res.text) as Body
    t.equal(body.type, 'validation_violation', what)
    t.match(body.message, message, what)
  }
  t.equal((await g.get('nodes/closed/thing/x')).status, 404, 'nothing was written')
  t.equal((await g.put('nodes/closed/thing/x', { label2: 'ok', count: 3 })).status, 204, 'declared properties are accepted')
  t.equal((await g.put('nodes/core/customer/open1', { anything: { goes: true } })).status, 204, 'an open type accepts undeclared properties')
})

t.test('whole consent revoked: 403 on single reads, LOCKED in lists, locked chunks in neighbours', async (t) => {
  const g = await newGraph('carol')
  const other = await newGraph('dave')
  await g.put('nodes/core/customer/r1', { name: 'Carol Doe', age: 31, email: 'c@x' })
  await g.put('relations/core/customer/r1/core/product/rp/core/viewed/v', { views: 3 })
  await other.put('relations/core/customer/r2/core/customer/r1/core/knows/k', { since: 2001 })
  t.equal((await revoke(g.consent)).status, 204)
  t.equal((await revoke(g.consent)).status, 204, 'revoking twice is fine')
  t.same((await call('GET', consentUrl(g.consent), auth())).json<Body>().status, 'revoked')

  const single = await g.get('nodes/core/customer/r1')
  t.equal(single.status, 403)
  t.equal(single.json<Body>().type, 'consent_revoked')
  t.equal((await g.get('nodes/core/customer/r1/name')).status, 403)
  const relation = await g.get('relations/core/customer/r1/core/product/rp/core/viewed/v')
  t.equal(relation.status, 403)
  t.equal(relation.json<Body>().type, 'consent_revoked')

  const list = (await g.get('nodes/core/customer', { 'consent-reference': g.consent })).json<Body[]>()
  t.same(list, [{ LOCKED: true }], 'the list shows the locked placeholder')
  const q = (await g.get(`nodes/core/customer?q=${enc('name:"Carol Doe"')}`)).json<Body[]>()
  t.same(q, [], 'an index hit on revoked data is left out: listing it would confirm a guess of the shredded value (the spec allows, not requires, the placeholder)')

  const chunks = (await other.get('neighbours/core/customer/r2')).json<Body[]>()
  const r1 = chunks.find((c) => c.id === 'r1')!
  t.same([r1.locked, r1.properties, r1.consentReference], [true, {}, g.consent])
  t.type(r1.created, 'number')
  t.equal((r1.relations as Body[])[0]!.locked, false, "dave's relation stays readable")
  const own = (await g.get('neighbours/core/customer/r1')).json<Body[]>()
  t.same([own[0]!.locked, own[0]!.properties], [true, {}], 'the source chunk is locked')
  const viewed = own.find((c) => c.id === 'rp')!
  t.same([(viewed.relations as Body[])[0]!.locked, (viewed.relations as Body[])[0]!.properties], [true, {}])
  t.notMatch(JSON.stringify([chunks, own]), /Carol Doe|c@x/)

  t.equal((await g.put('nodes/core/customer/r1', { name: 'X' })).status, 403, 'a revoked reference cannot write')
  t.equal((await g.post('counters/core/customer/r1/core/product/rp/core/viewed/v/views')).status, 403, 'nor count')
})

t.test('property consent revoked: reads omit just those properties, writes of them are 403', async (t) => {
  const g = await newGraph('erin')
  await g.put('nodes/core/customer/p1', { name: 'Erin', age: 40, email: 'e@x' })
  await g.put('relations/core/customer/p1/core/product/pp/core/viewed/v', { views: 1, lastSeen: 5 })
  const set = await call('PUT', consentUrl(g.consent, '/revokedProperties'), { ...auth(), 'content-type': 'application/json' }, '["email","lastSeen"]')
  t.equal(set.status, 204)
  t.same((await call('GET', consentUrl(g.consent), auth())).json<Body>().revokedProperties, ['email', 'lastSeen'])
  const node = (await g.get('nodes/core/customer/p1')).json<Body>()
  t.same([node.name, node.age, 'email' in node], ['Erin', 40, false])
  const prop = await g.get('nodes/core/customer/p1/email')
  t.equal(prop.status, 403)
  t.match(prop.json<Body>().message, /email/)
  t.same((await g.get('nodes/core/customer/p1/name')).json(), 'Erin')
  const rel = (await g.get('relations/core/customer/p1/core/product/pp/core/viewed/v')).json<Body>()
  t.same([rel.views, 'lastSeen' in rel], [1, false])
  const chunks = (await g.get('neighbours/core/customer/p1')).json<Body[]>()
  t.same(chunks[0]!.properties, { name: 'Erin', age: 40 })
  t.same((chunks[1]!.relations as Body[])[0]!.properties, { views: 1 })
  const listed = (await g.get('nodes/core/customer', { 'consent-reference': g.consent })).json<Body[]>()
  t.notOk(listed.some((n) => 'email' in n))
  const write = await g.put('nodes/core/customer/p1', { email: 'new@x' })
  t.equal(write.status, 403)
  t.match(write.json<Body>().message, /property "email"/)
  t.equal((await g.put('nodes/core/customer/p1', { age: 41 })).status, 204, 'other properties stay writable')
  const counted = await g.post('counters/core/customer/p1/core/product/pp/core/viewed/v/views')
  t.equal(counted.json<Body>().views, 2)
  t.notOk('lastSeen' in counted.json<Body>(), 'the counter answer omits revoked properties')
  await call('PUT', consentUrl(g.consent, '/revokedProperties'), { ...auth(), 'content-type': 'application/json' }, '[]')
  t.equal((await g.get('nodes/core/customer/p1')).json<Body>().email, 'e@x', 'restored when the property consent is given back')
  t.equal((await call('PUT', consentUrl(g.consent, '/revokedProperties'), { ...auth(), 'content-type': 'application/json' }, '{"a":1}')).status, 400)
})

t.test('granting again: new writes readable, old data stays locked and starts afresh on write', async (t) => {
  const g = await newGraph('frank')
  await g.put('nodes/core/customer/g1', { name: 'Old Name', age: 50 })
  await g.put('relations/core/customer/g1/core/product/gp/core/viewed/v', { views: 7 })
  await revoke(g.consent)
  t.equal((await grant(g.consent)).status, 204)
  t.equal((await call('GET', consentUrl(g.consent), auth())).json<Body>().status, 'granted')
  const old = await g.get('nodes/core/customer/g1')
  t.equal(old.status, 200)
  t.same(old.json(), { LOCKED: true }, 'old data is not decrypted with the new key')
  t.same((await g.get('relations/core/customer/g1/core/product/gp/core/viewed/v')).json(), { LOCKED: true })
  const chunk = (await g.get('neighbours/core/customer/g1')).json<Body[]>()
  t.same([chunk[0]!.locked, chunk[0]!.properties], [true, {}])
  t.same([(chunk[1]!.relations as Body[])[0]!.locked], [true])

  t.equal((await g.put('nodes/core/customer/g2', { name: 'New' })).status, 204)
  t.equal((await g.get('nodes/core/customer/g2')).json<Body>().name, 'New', 'new writes are readable')
  t.equal((await g.put('nodes/core/customer/g1', { age: 51 })).status, 204, 'a write on locked data starts it afresh')
  const fresh = (await g.get('nodes/core/customer/g1')).json<Body>()
  t.same([fresh.age, 'name' in fresh], [51, false], 'the old sealed properties are dropped')
  t.same((await g.get(`nodes/core/customer?q=${enc('name:"Old Name"')}`)).json(), [], 'a stale index entry finds nothing')
  t.equal((await g.post('counters/core/customer/g1/core/product/gp/core/viewed/v/views')).json<Body>().views, 1, 'a locked counter restarts')
})

t.test('consent calls: unknown references and bad bodies', async (t) => {
  t.equal((await revoke('cr_nope')).status, 404)
  t.equal((await grant('cr_nope')).status, 404)
  t.equal((await call('PUT', consentUrl('cr_nope', '/revokedProperties'), { ...auth(), 'content-type': 'application/json' }, '[]')).status, 404)
  t.equal((await call('PATCH', consentUrl('cr_nope'), auth())).status, 405)
})
