import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EMPTY_BOOTSTRAP, parseBootstrap, readBootstrapFile } from '../../../src/bootstrap/bootstrap-file'
import { ConfigError } from '../../../src/config/load-config'

const DEMO = join(__dirname, '..', '..', '..', 'bootstrap', 'demo.json')
const demoDoc = (): Record<string, unknown> => JSON.parse(readFileSync(DEMO, 'utf8')) as Record<string, unknown>

function bad(t: tap.Test, doc: unknown, message: string): void {
  const err = t.throws(() => parseBootstrap(doc), message) as Error
  t.ok(err instanceof ConfigError, 'a ConfigError')
  t.equal(err.message, `bootstrap file: ${message}`)
}

t.test('the demo bootstrap parses completely', async (t) => {
  const b = parseBootstrap(demoDoc())
  t.same(b.tenants, [{ id: 'demo', org: 'demo-org' }, { id: 'acme', org: 'acme-org' }])
  t.same(b.packages, [{
    id: 'profile-graph', version: '1.0.0', provider: { id: 'demo', org: 'demo-org' },
    includedServices: [{ id: 'profile-graph-service', name: 'Profile graph', scopes: ['platform.profile_graph_view', 'platform.profile_graph_manage'] }],
  }])
  t.same(b.subscriptions, [{ id: 'acme-profile-graph', tenant: 'acme', package: 'profile-graph' }])
  t.same(b.clients, [{
    client_id: 'demo-enricher', client_secret: 'demo-secret', tenant: 'demo',
    redirect_uris: ['http://127.0.0.1:8080/callback'],
    scopes: ['platform.profile_graph_view', 'platform.profile_graph_manage'],
    grant_types: ['client_credentials'], cors_origins: [],
  }])
  t.same(b.roles, {
    'graph-reader': ['platform.profile_graph_view'],
    'graph-writer': ['platform.profile_graph_view', 'platform.profile_graph_manage'],
  })
  t.same(b.users, [{ id: 'alice', username: 'alice', password: 'alice-password', email: 'alice@example.com', email_verified: false, tenants: { demo: ['graph-writer'] } }])
  t.same(b.metamodel['*']?.nodes['core/customer'], {
    owner: 'customer', open: false,
    properties: { name: { type: 'string', searchable: true }, age: { type: 'integer', searchable: true }, email: { type: 'string', searchable: false } },
  })
  t.same(b.metamodel['*']?.nodes['core/product'], {
    owner: 'tenant', open: true,
    properties: { title: { type: 'string', searchable: true }, price: { type: 'number', searchable: false } },
  })
  t.same(b.metamodel['*']?.relations['core/customer/core/product/core/viewed'], {
    owner: 'customer', open: false,
    properties: { views: { type: 'integer', searchable: false }, lastSeen: { type: 'integer', searchable: false } },
  })
  t.same(Object.keys(b.metamodel['*']?.relations ?? {}), ['core/customer/core/product/core/viewed', 'core/customer/core/customer/core/knows'])
})

t.test('readBootstrapFile reads the demo file', async (t) => {
  t.same(readBootstrapFile(DEMO), parseBootstrap(demoDoc()))
  t.equal(readBootstrapFile(undefined), EMPTY_BOOTSTRAP, 'no file is the empty bootstrap')
})

t.test('every key is optional', async (t) => {
  t.same(parseBootstrap({}), { tenants: [], packages: [], subscriptions: [], clients: [], roles: {}, users: [], metamodel: {}, identityProviders: [] })
  t.same(EMPTY_BOOTSTRAP, parseBootstrap({}))
})

t.test('defaults: user id, client secret and lists, type owner and open, searchable', async (t) => {
  const b = parseBootstrap({
    users: [
      { username: 'bob', password: 'pw', email: 'bob@example.com' },
      { id: 'u-7', username: 'carol', password: 'pw', email: 'c@example.com', email_verified: true, tenants: { demo: [] } },
    ],
    clients: [{ client_id: 'public-app', tenant: 'demo' }],
    metamodel: { demo: { nodes: { 'a/b': {} }, relations: { 'a/b/a/b/r/s': { owner: 'tenant', open: true } } } },
  })
  t.same(b.users[0], { id: 'bob', username: 'bob', password: 'pw', email: 'bob@example.com', email_verified: false, tenants: {} }, 'id defaults to the username, email_verified to false')
  t.equal(b.users[1]?.id, 'u-7')
  t.equal(b.users[1]?.email_verified, true)
  t.same(b.clients[0], { client_id: 'public-app', client_secret: undefined, tenant: 'demo', redirect_uris: [], scopes: [], grant_types: [], cors_origins: [] })
  t.same(b.metamodel.demo?.nodes['a/b'], { owner: 'customer', open: false, properties: {} }, 'owner customer, closed')
  t.same(b.metamodel.demo?.relations['a/b/a/b/r/s'], { owner: 'tenant', open: true, properties: {} })
})

t.test('errors name the bad path', async (t) => {
  bad(t, [], '(top) must be an object')
  bad(t, null, '(top) must be an object')
  bad(t, { tenants: {} }, 'tenants must be an array')
  bad(t, { tenants: [{ id: 'x' }] }, 'tenants[0].org must be a non-empty string')
  bad(t, { tenants: [{ id: 'x', org: 'o' }, 'y'] }, 'tenants[1] must be an object')
  bad(t, { clients: [{ client_id: 'c' }] }, 'clients[0].tenant must be a non-empty string')
  bad(t, { clients: [{ client_id: 'c', tenant: '' }] }, 'clients[0].tenant must be a non-empty string')
  bad(t, { clients: [{ client_id: 'c', tenant: 't', client_secret: 5 }] }, 'clients[0].client_secret must be a non-empty string')
  bad(t, { clients: [{ client_id: 'c', tenant: 't', scopes: ['a', 7] }] }, 'clients[0].scopes[1] must be a non-empty string')
  bad(t, { packages: [{ id: 'p', version: '1' }] }, 'packages[0].provider must be an object')
  bad(t, { packages: [{ id: 'p', version: '1', provider: { id: 'd', org: 'o' }, includedServices: [{ id: 's', name: 'n', scopes: [''] }] }] },
    'packages[0].includedServices[0].scopes[0] must be a non-empty string')
  bad(t, { subscriptions: [{ id: 's', tenant: 't' }] }, 'subscriptions[0].package must be a non-empty string')
  bad(t, { roles: { reader: 'x' } }, 'roles.reader must be an array')
  bad(t, { users: [{ username: 'u', password: 'p', email: 'e', tenants: { demo: 'r' } }] }, 'users[0].tenants.demo must be an array')
  bad(t, { users: [{ username: 'u', password: 'p' }] }, 'users[0].email must be a non-empty string')
  bad(t, { users: [{ username: 'u', password: 'p', email: 'e', email_verified: 'yes' }] }, 'users[0].email_verified must be true or false')
})

t.test('metamodel errors name the bad path', async (t) => {
  bad(t, { metamodel: { '*': { nodes: { core: {} } } } }, 'metamodel.*.nodes.core must be named with 2 non-empty segments separated by "/"')
  bad(t, { metamodel: { '*': { nodes: { 'core/': {} } } } }, 'metamodel.*.nodes.core/ must be named with 2 non-empty segments separated by "/"')
  bad(t, { metamodel: { '*': { relations: { 'a/b/c/d/e': {} } } } }, 'metamodel.*.relations.a/b/c/d/e must be named with 6 non-empty segments separated by "/"')
  bad(t, { metamodel: { '*': { nodes: { 'a/b': { owner: 'nobody' } } } } }, 'metamodel.*.nodes.a/b.owner must be "customer" or "tenant"')
  bad(t, { metamodel: { '*': { nodes: { 'a/b': { open: 'yes' } } } } }, 'metamodel.*.nodes.a/b.open must be true or false')
  bad(t, { metamodel: { demo: { nodes: { 'a/b': { properties: { p: { type: 'text' } } } } } } },
    'metamodel.demo.nodes.a/b.properties.p.type must be one of string, integer, number, boolean, object, array, any')
  bad(t, { metamodel: { demo: { nodes: { 'a/b': { properties: { p: { type: 'string', searchable: 1 } } } } } } },
    'metamodel.demo.nodes.a/b.properties.p.searchable must be true or false')
  bad(t, { metamodel: { demo: [] } }, 'metamodel.demo must be an object')
})

t.test('a metamodel and roles with names Object.prototype has keep them as their own fields', async (t) => {
  const b = parseBootstrap(JSON.parse(`{
    "metamodel": {"__proto__": {"nodes": {"a/constructor": {"properties": {"__proto__": {"type": "integer"}, "toString": {"type": "string"}}}}}},
    "roles": {"__proto__": ["s1"], "constructor": ["s2"]}
  }`))
  t.same(Object.keys(b.metamodel), ['__proto__'])
  t.equal(Object.getPrototypeOf(b.metamodel), Object.prototype, 'the prototype is untouched')
  const def = Object.getOwnPropertyDescriptor(b.metamodel, '__proto__')?.value as { nodes: Record<string, { properties: object }> }
  t.same(Object.keys(def.nodes['a/constructor']!.properties), ['__proto__', 'toString'])
  t.same(Object.keys(b.roles), ['__proto__', 'constructor'])
})

t.test('type names may contain dots', async (t) => {
  const b = parseBootstrap({
    metamodel: { '*': { nodes: { 'core/product.variant': {} }, relations: { 'a/b/c/d/e/f.g': {} } } },
  })
  t.same(b.metamodel['*']?.nodes['core/product.variant'], { owner: 'customer', open: false, properties: {} })
  t.same(b.metamodel['*']?.relations['a/b/c/d/e/f.g'], { owner: 'customer', open: false, properties: {} })
})

t.test('readBootstrapFile: missing file and invalid JSON', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bootstrap-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const missing = join(dir, 'missing.json')
  const e1 = t.throws(() => readBootstrapFile(missing)) as Error
  t.ok(e1 instanceof ConfigError)
  t.match(e1.message, `cannot read bootstrap file ${missing}: `)
  t.match(e1.message, /ENOENT/)

  const broken = join(dir, 'broken.json')
  writeFileSync(broken, '{"tenants": [')
  const e2 = t.throws(() => readBootstrapFile(broken)) as Error
  t.ok(e2 instanceof ConfigError)
  t.match(e2.message, `bootstrap file ${broken} is not valid JSON: `)

  const wrong = join(dir, 'wrong.json')
  writeFileSync(wrong, '{"clients": [{"client_id": "c"}]}')
  const e3 = t.throws(() => readBootstrapFile(wrong)) as Error
  t.equal(e3.message, 'bootstrap file: clients[0].tenant must be a non-empty string', 'a valid JSON file is validated')
})

t.test('ids that become keys of the auth store are at most 128 characters', async (t) => {
  const long = 'x'.repeat(129)
  bad(t, { tenants: [{ id: long, org: 'o' }] }, 'tenants[0].id must be at most 128 characters')
  bad(t, { users: [{ username: long, password: 'p', email: 'e' }] }, 'users[0].username must be at most 128 characters')
  bad(t, { users: [{ id: long, username: 'u', password: 'p', email: 'e' }] }, 'users[0].id must be at most 128 characters')
  bad(t, { clients: [{ client_id: long, tenant: 't' }] }, 'clients[0].client_id must be at most 128 characters')
  bad(t, { roles: { [long]: [] } }, 'roles has a name longer than 128 characters')
  t.equal(parseBootstrap({ tenants: [{ id: 'x'.repeat(128), org: 'o' }] }).tenants[0]!.id.length, 128)
})

t.test('a service may name its source URL (the gateway); a bad one stops the start', async (t) => {
  const pkg = (services: unknown[]) => ({ packages: [{ id: 'p', version: '1', provider: { id: 'demo', org: 'demo-org' }, includedServices: services }] })
  const b = parseBootstrap(pkg([{ id: 's', name: 'S', scopes: [], sourceUrl: 'http://svc.internal:9000/api/' }, { id: 't', name: 'T' }]))
  t.same(b.packages[0]!.includedServices, [{ id: 's', name: 'S', scopes: [], sourceUrl: 'http://svc.internal:9000/api' }, { id: 't', name: 'T', scopes: [] }])
  t.throws(() => parseBootstrap(pkg([{ id: 's', name: 'S', sourceUrl: 'http://svc/api?x=1' }])), /includedServices\[0\]\.sourceUrl must be an http or https URL/)
})

t.test('every other message of the file, pinned; with several bad values, the first one read', async (t) => {
  const svc = (s: Record<string, unknown>) => ({ packages: [{ id: 'p', version: '1', provider: { id: 'd', org: 'o' }, includedServices: [{ id: 's', name: 'S', ...s }] }] })
  const prop = (p: Record<string, unknown>) => ({ metamodel: { demo: { nodes: { 'a/b': { properties: { p } } } } } })
  bad(t, svc({ sourceUrl: '' }), 'packages[0].includedServices[0].sourceUrl must be a non-empty string')
  bad(t, svc({ sourceUrl: 'ftp://x' }), 'packages[0].includedServices[0].sourceUrl must be an http or https URL without query or fragment')
  bad(t, svc({ name: 5 }), 'packages[0].includedServices[0].name must be a non-empty string')
  bad(t, { packages: [{ id: 'p', version: '1', provider: { id: 'd', org: 'o' }, includedServices: {} }] }, 'packages[0].includedServices must be an array')
  bad(t, { packages: [{ id: 'p', version: '1', provider: { id: 'd' } }] }, 'packages[0].provider.org must be a non-empty string')
  bad(t, prop({}), 'metamodel.demo.nodes.a/b.properties.p.type must be a non-empty string')
  bad(t, prop({ type: '' }), 'metamodel.demo.nodes.a/b.properties.p.type must be a non-empty string')
  bad(t, prop({ type: 5 }), 'metamodel.demo.nodes.a/b.properties.p.type must be a non-empty string')
  bad(t, prop('x' as unknown as Record<string, unknown>), 'metamodel.demo.nodes.a/b.properties.p must be an object')
  bad(t, { metamodel: { demo: { nodes: [] } } }, 'metamodel.demo.nodes must be an object')
  bad(t, { metamodel: { demo: { nodes: { 'a/b': 5 } } } }, 'metamodel.demo.nodes.a/b must be an object')
  bad(t, { metamodel: { demo: { nodes: { 'a/b': { properties: [] } } } } }, 'metamodel.demo.nodes.a/b.properties must be an object')
  bad(t, { metamodel: { demo: { relations: { 'a/b/c/d/e/f': { owner: 5 } } } } }, 'metamodel.demo.relations.a/b/c/d/e/f.owner must be "customer" or "tenant"')
  bad(t, { metamodel: { demo: { nodes: { 'a/b': { owner: 'x', open: 'y' }, c: 5 } } } }, 'metamodel.demo.nodes.a/b.owner must be "customer" or "tenant"')
  bad(t, { metamodel: { demo: { nodes: { c: 5, 'a/b': { owner: 'x' } } } } }, 'metamodel.demo.nodes.c must be named with 2 non-empty segments separated by "/"')
  bad(t, { metamodel: 5 }, 'metamodel must be an object')
  bad(t, { roles: [] }, 'roles must be an object')
  bad(t, { roles: { r: ['a', ''] } }, 'roles.r[1] must be a non-empty string')
  bad(t, { users: [{ username: 'u', id: '', password: 'p', email: 'e' }] }, 'users[0].id must be a non-empty string')
  bad(t, { users: [{ id: 5, password: 'p', email: 'e' }] }, 'users[0].username must be a non-empty string')
  bad(t, { users: [{ username: 'u', email: 'e' }] }, 'users[0].password must be a non-empty string')
  bad(t, { users: [{ username: 'u', password: 'p', email: 'e', tenants: [] }] }, 'users[0].tenants must be an object')
  bad(t, { users: [{ username: 'u', password: 'p', email: 'e', tenants: { demo: [3] } }] }, 'users[0].tenants.demo[0] must be a non-empty string')
  bad(t, { users: 'x' }, 'users must be an array')
  bad(t, { clients: [{ client_id: 'c', tenant: 't', redirect_uris: 'x' }] }, 'clients[0].redirect_uris must be an array')
  bad(t, { clients: [{ client_id: 'c', tenant: 't', cors_origins: [''] }] }, 'clients[0].cors_origins[0] must be a non-empty string')
  bad(t, { clients: [{ client_id: 'c', tenant: 't', client_secret: '' }] }, 'clients[0].client_secret must be a non-empty string')
  bad(t, { clients: [{ tenant: 5 }] }, 'clients[0].client_id must be a non-empty string')
  bad(t, { subscriptions: [{ tenant: 't', package: 'p' }] }, 'subscriptions[0].id must be a non-empty string')
  bad(t, { identityProviders: [5] }, 'identityProviders[0] must be an object')
  bad(t, { identityProviders: {} }, 'identityProviders must be an array')
  bad(t, { tenants: [{ id: 'x' }], users: 5 }, 'tenants[0].org must be a non-empty string')
  bad(t, { metamodel: { demo: { nodes: { 'a/b': { open: null } } } } }, 'metamodel.demo.nodes.a/b.open must be true or false')
  t.same(parseBootstrap({ metamodel: { demo: { nodes: { 'a/b': { owner: null } } } } }).metamodel.demo?.nodes['a/b'], { owner: 'customer', open: false, properties: {} }, 'owner null is the default')
  t.same(parseBootstrap({ identityProviders: [{ id: 'x', extra: [1] }] }).identityProviders, [{ id: 'x', extra: [1] }], 'an identity provider is checked later, by the admin API rules')
})
