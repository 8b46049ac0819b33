// Names a plain JavaScript object inherits (constructor, __proto__,
// toString...) given wherever a client names something: node and relation
// types, property names, ids, counters, tenants, admin records, form fields,
// query parameters. Each is an ordinary name: the answer is the one any other
// name gets (a success, or the 4xx of an undeclared one), never a 5xx.
import t, { type Test } from 'tap'
import { Graph, call, createConsent, enc, type Answer } from '../helpers/client'
import { serverForFile } from '../helpers/server'
import { adminToken, basic, oauthServerForFile, postForm, type Json } from '../helpers/oauth'

const NAMES = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString']

const fixture = serverForFile(t)
const oauth = oauthServerForFile(t)

/** The answer must have `status`; a 5xx fails with its body, whatever was expected. */
function expect(t: Test, res: Answer, status: number, what: string): void {
  if (res.status >= 500) t.fail(`${what}: ${res.status} ${res.text.slice(0, 300)}`)
  else t.equal(res.status, status, what, { body: res.text.slice(0, 300) })
}

/** The field `name` the object holds itself (JSON.parse makes "__proto__" an own field too). */
const ownField = (o: Json, name: string): unknown => Object.getOwnPropertyDescriptor(o, name)?.value

t.test('graph: property names', async (t) => {
  const g = fixture.graph
  for (const n of NAMES) {
    expect(t, await g.put('nodes/core/customer/props', { [n]: `v-${n}` }), 204, `PUT node {${n}} of an open type`)
    const node = await g.get('nodes/core/customer/props')
    expect(t, node, 200, 'GET it')
    t.equal(ownField(node.json<Json>(), n), `v-${n}`, `${n} reads back`)
    expect(t, await g.put('nodes/closed/thing/props', { [n]: 'v' }), 400, `PUT node {${n}} of a closed type`)
    expect(t, await g.put(`nodes/core/customer/single/${enc(n)}`, 7), 204, `PUT node property ${n}`)
    const single = await g.get(`nodes/core/customer/single/${enc(n)}`)
    expect(t, single, 200, `GET node property ${n}`)
    t.equal(single.text, '7')
    expect(t, await g.get(`nodes/core/customer/props/${enc(n)}x`), 404, `GET a property ${n}x it does not have`)
    expect(t, await g.put(`nodes/closed/thing/single/${enc(n)}`, 7), 400, `PUT property ${n} of a closed type`)
    expect(t, await g.put('relations/core/customer/props/core/product/p1/core/viewed/r1', { [n]: 1 }), 204, `PUT relation {${n}} of an open type`)
    const rel = await g.get('relations/core/customer/props/core/product/p1/core/viewed/r1')
    t.equal(ownField(rel.json<Json>(), n), 1, `${n} of the relation reads back`)
    expect(t, await g.put('relations/core/product/p1/core/product/p2/core/bundles/b1', { [n]: 1 }), 400, `PUT relation {${n}} of a closed type`)
    expect(t, await g.post(`counters/core/customer/props/core/product/p1/core/viewed/r1/${enc(n)}`), 400, `POST counter ${n}`)
    expect(t, await g.get(`nodes/core/customer?q=${enc(`${n}:"x"`)}`), 400, `search by ${n}`)
  }
})

t.test('graph: types, namespaces, ids and tenants', async (t) => {
  const g = fixture.graph
  for (const n of NAMES) {
    const e = enc(n)
    expect(t, await g.put(`nodes/core/${e}/a`, {}), 400, `PUT node of type ${n}`)
    expect(t, await g.put(`nodes/${e}/customer/a`, {}), 400, `PUT node of namespace ${n}`)
    expect(t, await g.get(`nodes/core/${e}`), 200, `GET the list of type ${n}`)
    expect(t, await g.get(`nodes/core/${e}/a`), 404, `GET a node of type ${n}`)
    expect(t, await g.get(`neighbours/core/${e}/a`), 404, `GET the neighbours of a node of type ${n}`)
    expect(t, await g.put(`relations/core/customer/a/core/product/p1/core/${e}/r1`, {}), 400, `PUT relation of type ${n}`)
    expect(t, await g.get(`metamodel/nodes/core/${e}`), 404, `GET metamodel node type ${n}`)
    expect(t, await g.get(`metamodel/relations/core/customer/core/product/core/${e}`), 404, `GET metamodel relation type ${n}`)
    expect(t, await g.put(`nodes/core/customer/${e}`, { name: n }), 204, `PUT node id ${n}`)
    expect(t, await g.get(`nodes/core/customer/${e}`), 200, `GET node id ${n}`)
    expect(t, await g.put(`relations/core/customer/${e}/core/product/p1/core/viewed/${e}`, {}), 204, `PUT relation id ${n}`)
    expect(t, await g.get(`relations/core/customer/${e}/core/product/p1/core/viewed/${e}`), 200, `GET relation id ${n}`)
    expect(t, await g.delete(`nodes/core/customer/${e}`), 204, `DELETE node id ${n}`)
    expect(t, await g.get(`consents/${e}`), 404, `GET consent ${n}`)
    expect(t, await g.get(`webhooks/${e}`), 404, `GET webhook ${n}`)
    expect(t, await new Graph(g.base, n, g.token, g.consent).get('nodes/core/customer/a'), 403, `tenant ${n}`)
    const consent = await createConsent(g.base, 'demo', g.token, n)
    expect(t, await call('PUT', g.url(`consents/${consent}/revokedProperties`), { authorization: `Bearer ${g.token}`, 'content-type': 'application/json' }, JSON.stringify([n])), 204, `revoke property ${n}`)
  }
})

t.test('graph: query parameters', async (t) => {
  const g = fixture.graph
  for (const n of NAMES) {
    for (const path of ['nodes/core/customer', 'nodes/core/customer/props', 'neighbours/core/customer/props', 'events', 'webhooks', 'metamodel', 'export']) {
      expect(t, await g.get(`${path}?${enc(n)}=1`), 200, `GET ${path}?${n}=1`)
    }
  }
})

t.test('oauth: admin records named so', async (t) => {
  const admin = await adminToken(oauth.issuer)
  const api = (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<Answer> =>
    call(method, `${oauth.issuer}/admin/${path}`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body === undefined ? undefined : JSON.stringify(body))
  for (const [i, n] of NAMES.entries()) {
    const e = enc(n)
    if (n === '__proto__') {
      // The auth store keeps a user's roles under the tenant's name, and msgpack reads that key back as "__proto_".
      const refused = await api('POST', 'tenants', { id: n, org: 'o' })
      expect(t, refused, 400, 'POST tenant __proto__')
      t.match(refused.json<Json>(), { type: 'validation_violation', message: /__proto__/ })
      expect(t, await api('PUT', `tenants/${e}`, { org: 'o' }), 400, 'PUT tenant __proto__')
      expect(t, await api('GET', `tenants/${e}`), 404, 'GET tenant __proto__')
    } else {
      expect(t, await api('POST', 'tenants', { id: n, org: 'o' }), 201, `POST tenant ${n}`)
      expect(t, await api('PUT', `tenants/${e}`, { org: 'o2' }), 200, `PUT tenant ${n}`)
      expect(t, await api('GET', `tenants/${e}`), 200, `GET tenant ${n}`)
    }
    expect(t, await api('PUT', `roles/${e}`, { scopes: ['platform.profile_graph_view'] }), 201, `PUT role ${n}`)
    t.same(ownField((await api('GET', 'roles')).json<Json>(), n), ['platform.profile_graph_view'], `role ${n} is listed`)
    const tenant = n === '__proto__' ? 'demo' : n
    const user = { id: n, username: n, email: `user${i}@example.com`, password: 'a-password-123', tenants: { [tenant]: [n] } }
    expect(t, await api('POST', 'users', user), 201, `POST user ${n} with role ${n} in tenant ${tenant}`)
    const stored = await api('GET', `users/${e}`)
    expect(t, stored, 200, `GET user ${n}`)
    t.same(ownField(stored.json<{ tenants: Json }>().tenants, tenant), [n], `its roles in tenant ${tenant} read back`)
    expect(t, await api('POST', 'users', { ...user, id: `${n}-2`, username: `${n}-2`, email: `other${i}@example.com`, tenants: { __proto__x: [n] } }), 400, 'a user in a tenant that does not exist')
    expect(t, await api('POST', 'clients', { client_id: n, tenant: 'demo', scopes: [n], grant_types: ['client_credentials'] }), 201, `POST client ${n}`)
    expect(t, await api('GET', `clients/${e}`), 200, `GET client ${n}`)
    expect(t, await api('PUT', `packages/${e}`, { version: n, provider: { id: 'demo', org: 'demo-org' }, includedServices: [{ id: n, name: n, scopes: [n] }] }), 201, `PUT package ${n}`)
    expect(t, await api('POST', 'subscriptions', { id: n, tenant: 'acme', package: n }), 201, `POST subscription ${n}`)
    expect(t, await api('GET', `subscriptions/${e}`), 200, `GET subscription ${n}`)
    expect(t, await api('GET', `identity-providers/${e}`), 404, `GET identity provider ${n}`)
    expect(t, await api('GET', `tenants?${e}=1`), 200, `GET tenants?${n}=1`)
  }
})

t.test('oauth: form fields and query parameters', async (t) => {
  const cc = { authorization: basic('cc-only', 'cc-secret') }
  for (const n of NAMES) {
    expect(t, await postForm(`${oauth.issuer}/token`, { grant_type: n }, cc), 400, `grant_type ${n}`)
    expect(t, await postForm(`${oauth.issuer}/token`, { grant_type: 'client_credentials', scope: n }, cc), 200, `scope ${n}`)
    expect(t, await postForm(`${oauth.issuer}/token`, { grant_type: 'client_credentials', [n]: 'x' }, cc), 200, `a field named ${n}`)
    expect(t, await postForm(`${oauth.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic(n, 'nope') }), 401, `client ${n} with a wrong secret`)
    expect(t, await postForm(`${oauth.issuer}/introspect`, { token: n, token_type_hint: n }, { authorization: basic('web-app', 'web-secret') }), 200, `introspect ${n}`)
    expect(t, await call('GET', `${oauth.issuer}/authorize?${new URLSearchParams({ client_id: n, response_type: 'code', redirect_uri: 'https://x.example/cb' }).toString()}`), 400, `authorize client ${n}`)
    expect(t, await call('GET', `${oauth.issuer}/idp/${enc(n)}/callback?state=x&code=y`), 400, `callback of identity provider ${n}`)
    expect(t, await call('GET', `${oauth.issuer}/.well-known/openid-configuration?${enc(n)}=1`), 200, `discovery?${n}=1`)
  }
})
