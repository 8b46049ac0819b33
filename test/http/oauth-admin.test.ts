// The admin API under /oauth2/v1/admin (scope platform.admin): tenants,
// packages, subscriptions, clients with generated secrets, users, roles; and
// what each change does to the grants.
import t from 'tap'
import {
  adminToken, basic, WEB_AUTH, call, codeFor, MANAGE, oauthServerForFile, postForm, tokenOk, VIEW, type Json,
} from '../helpers/oauth'
import type { Answer } from '../helpers/client'

const env = oauthServerForFile(t)
let admin: string
t.before(async () => {
  admin = await adminToken(env.issuer)
})

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, token = admin): Promise<Answer> =>
  call(method, `${env.issuer}/admin/${path}`, {
    authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  }, body === undefined ? undefined : JSON.stringify(body))

t.test('the admin API needs a live token with platform.admin', async (t) => {
  const none = await call('GET', `${env.issuer}/admin/tenants`)
  t.equal(none.status, 401)
  t.equal(none.json<Json>().type, 'insufficient_credentials')
  const web = (await tokenOk(env.issuer, { grant_type: 'client_credentials' }, { authorization: basic('web-app', 'web-secret') })).access_token
  const res = await api('GET', 'tenants', undefined, web)
  t.equal(res.status, 403)
  t.equal(res.json<Json>().type, 'insufficient_scope')
  const created = await api('POST', 'tenants', { id: 'never', org: 'x' }, web)
  t.equal(created.status, 403, 'refused before the body is read')
  t.equal((await api('GET', 'tenants/never')).status, 404)
  t.equal((await api('GET', 'tenants')).status, 200)
  t.equal((await api('PATCH' as 'PUT', 'tenants')).status, 405)
})

t.test('admin JSON bodies are bounded in depth like every JSON body', async (t) => {
  const deep = '{"org":'.repeat(5000) + '"x"' + '}'.repeat(5000)
  const res = await call('POST', `${env.issuer}/admin/tenants`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, deep)
  t.equal(res.status, 400)
  t.match(res.json<Json>().message, /nested deeper than 64 levels/)
  t.equal((await api('GET', 'tenants')).status, 200, 'the server goes on')
})

t.test('tenants', async (t) => {
  const created = await api('POST', 'tenants', { id: 'initech', org: 'initech-org' })
  t.equal(created.status, 201)
  t.same(created.json<Json>(), { id: 'initech', org: 'initech-org' })
  t.equal(created.headers['cache-control'], 'no-store')
  t.equal((await api('POST', 'tenants', { id: 'initech', org: 'x' })).status, 400, 'exists')
  t.same((await api('GET', 'tenants/initech')).json<Json>(), { id: 'initech', org: 'initech-org' })
  t.ok((await api('GET', 'tenants')).json<Json[]>().some((x) => x.id === 'initech'))
  t.equal((await api('PUT', 'tenants/initech', { org: 'initech-holding' })).status, 200)
  t.equal((await api('GET', 'tenants/initech')).json<Json>().org, 'initech-holding')
  t.equal((await api('PUT', 'tenants/hooli', { org: 'hooli-org' })).status, 201, 'PUT creates')
  const refused = await api('DELETE', 'tenants/demo')
  t.equal(refused.status, 400)
  t.match(refused.json<Json>(), { type: 'validation_violation', message: /still used by .*client "demo-enricher"/ })
  t.equal((await api('DELETE', 'tenants/hooli')).status, 204)
  t.equal((await api('GET', 'tenants/hooli')).status, 404)
  for (const [what, body] of [['no org', { id: 'a' }], ['a space in the id', { id: 'a b', org: 'o' }], ['a number', { id: 1, org: 'o' }], ['an array', []]] as [string, unknown][]) {
    const res = await api('POST', 'tenants', body)
    t.equal(res.status, 400, what)
  }
  const notJson = await call('POST', `${env.issuer}/admin/tenants`, { authorization: `Bearer ${admin}`, 'content-type': 'text/plain' }, 'x')
  t.equal(notJson.status, 415)
  const badJson = await call('POST', `${env.issuer}/admin/tenants`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, '{')
  t.equal(badJson.status, 400)
})

t.test('packages and subscriptions decide which tenants a client may serve', async (t) => {
  const cc = { authorization: basic('web-app', 'web-secret') }
  const before = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials', scope: 'platform.tenant=initech' }, cc)
  t.equal(before.json<Json>().error, 'invalid_scope', 'initech has no subscription yet')

  const pkg = {
    version: '2.0.0', provider: { id: 'demo', org: 'demo-org' },
    includedServices: [{ id: 'graph-write', name: 'Graph writer', scopes: [MANAGE] }],
  }
  t.equal((await api('PUT', 'packages/graph-writer', pkg)).status, 201)
  t.equal((await api('PUT', 'packages/graph-writer', pkg)).status, 200)
  t.same((await api('GET', 'packages/graph-writer')).json<Json>(), { id: 'graph-writer', ...pkg })
  t.equal((await api('PUT', 'packages/bad', { ...pkg, provider: { id: 'demo', org: 'other-org' } })).status, 400, 'provider org must match')
  t.equal((await api('PUT', 'packages/bad', { ...pkg, provider: { id: 'ghost', org: 'x' } })).status, 400, 'provider must exist')

  const sub = await api('POST', 'subscriptions', { tenant: 'initech', package: 'graph-writer' })
  t.equal(sub.status, 201)
  const s = sub.json<Json>()
  t.match(s, { id: /.+/, tenant: 'initech', package: 'graph-writer', validFrom: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ })
  t.equal((await api('POST', 'subscriptions', { tenant: 'initech', package: 'graph-writer' })).status, 400, 'once per tenant and package')
  t.equal((await api('POST', 'subscriptions', { tenant: 'ghost', package: 'graph-writer' })).status, 400)
  t.same((await api('GET', 'subscriptions?tenant=initech')).json<Json[]>(), [s])
  t.same((await api('GET', `subscriptions/${s.id as string}`)).json<Json>(), s)

  const after = await tokenOk(env.issuer, { grant_type: 'client_credentials', scope: 'platform.tenant=initech' }, cc)
  t.equal(after.scope, `${MANAGE} platform.tenant=initech`, 'only the package scopes')
  t.equal((await api('DELETE', 'packages/graph-writer')).status, 400, 'a subscribed package stays')
  t.equal((await api('DELETE', `subscriptions/${s.id as string}`)).status, 204, 'cancelled')
  const cancelled = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials', scope: 'platform.tenant=initech' }, cc)
  t.equal(cancelled.json<Json>().error, 'invalid_scope')
  t.equal((await api('DELETE', 'packages/graph-writer')).status, 204)
})

t.test('clients: generated 256-bit secrets shown once and stored as SHA-256, rotation, public clients, deletion', async (t) => {
  const created = await api('POST', 'clients', {
    client_id: 'reporting', tenant: 'demo', redirect_uris: ['https://reports.example/cb'], scopes: [VIEW], grant_types: ['client_credentials', 'authorization_code'],
  })
  t.equal(created.status, 201)
  const c = created.json<Json>()
  t.match(c.client_secret, /^[A-Za-z0-9_-]{43}$/, '256 random bits')
  t.match(c, { client_id: 'reporting', tenant: 'demo', public: false, secret_hash: 'sha256' })
  const shown = (await api('GET', 'clients/reporting')).json<Json>()
  t.equal(shown.client_secret, undefined, 'never shown again')
  t.notOk(JSON.stringify((await api('GET', 'clients')).json()).includes(c.client_secret as string))
  const token = await tokenOk(env.issuer, { grant_type: 'client_credentials' }, { authorization: basic('reporting', c.client_secret as string) })
  t.equal(token.scope, `${VIEW} platform.tenant=demo`)

  const rotated = await api('POST', 'clients/reporting/secret')
  t.equal(rotated.status, 200)
  const secret2 = rotated.json<Json>().client_secret as string
  t.not(secret2, c.client_secret)
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('reporting', c.client_secret as string) })).status, 401, 'the old secret stops at once')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('reporting', secret2) })).status, 200)

  const updated = await api('PUT', 'clients/reporting', { scopes: [VIEW, MANAGE] })
  t.equal(updated.status, 200)
  t.same(updated.json<Json>().scopes, [VIEW, MANAGE])
  t.same(updated.json<Json>().redirect_uris, ['https://reports.example/cb'], 'other fields kept')

  const pub = await api('POST', 'clients', { tenant: 'demo', public: true, redirect_uris: ['http://localhost:3000/cb'], scopes: [VIEW], grant_types: ['authorization_code'] })
  t.equal(pub.status, 201)
  t.match(pub.json<Json>(), { public: true, client_id: /^[A-Za-z0-9_-]{22}$/ })
  t.equal(pub.json<Json>().client_secret, undefined)
  t.equal((await api('POST', `clients/${pub.json<Json>().client_id as string}/secret`)).status, 400, 'a public client has no secret')

  for (const [what, body] of [
    ['http redirect URI off loopback', { redirect_uris: ['http://reports.example/cb'] }],
    ['a fragment', { redirect_uris: ['https://reports.example/cb#x'] }],
    ['a relative URI', { redirect_uris: ['/cb'] }],
    ['an unknown grant type', { grant_types: ['magic'] }],
    ['an unknown tenant', { tenant: 'ghost' }],
    ['a public client with client_credentials', { public: true, grant_types: ['client_credentials'] }],
    ['code flow without redirect URI', { redirect_uris: [], grant_types: ['authorization_code'] }],
  ] as [string, Json][]) {
    const res = await api('POST', 'clients', { tenant: 'demo', redirect_uris: ['https://ok.example/cb'], scopes: [], grant_types: ['authorization_code'], ...body })
    t.equal(res.status, 400, what)
    t.equal(res.json<Json>().type, 'validation_violation', what)
  }

  const before = await tokenOk(env.issuer, { grant_type: 'client_credentials' }, { authorization: basic('reporting', secret2) })
  t.equal((await api('DELETE', 'clients/reporting')).status, 204)
  t.equal((await call('GET', `${env.server.url}/graph/v1/demo/nodes/core/customer/x`, { authorization: `Bearer ${before.access_token}` })).status, 401, 'its tokens end with it')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('reporting', secret2) })).status, 401)
  t.equal((await api('GET', 'clients/reporting')).status, 404)
})

t.test('users and roles: scrypt passwords never shown, roles per tenant, changes narrow refreshes, deletion ends tokens', async (t) => {
  const created = await api('POST', 'users', { username: 'dave', password: 'dave-password', email: 'dave@example.com', tenants: { demo: ['graph-writer'] } })
  t.equal(created.status, 201)
  t.same(created.json<Json>(), { id: 'dave', username: 'dave', email: 'dave@example.com', email_verified: false, tenants: { demo: ['graph-writer'] } })
  t.equal((await api('PUT', 'users/dave', { email_verified: true })).json<Json>().email_verified, true)
  t.equal((await api('GET', 'users/dave')).json<Json>().email_verified, true)
  t.equal((await api('PUT', 'users/dave', { tenants: { demo: ['graph-writer'] } })).json<Json>().email_verified, true, 'kept by a change of other fields')
  t.equal((await api('PUT', 'users/dave', { email: 'dave@example.org' })).json<Json>().email_verified, false, 'a new e-mail is not verified')
  t.equal((await api('PUT', 'users/dave', { email: 'dave@example.com', email_verified: true })).json<Json>().email_verified, true, 'unless said so')
  t.notOk(JSON.stringify((await api('GET', 'users')).json()).includes('dave-password'))
  t.equal((await api('POST', 'users', { username: 'dave', password: 'another-pw', email: 'd@example.com', id: 'dave2' })).status, 400, 'username taken')
  t.equal((await api('POST', 'users', { username: 'eve', password: 'short', email: 'e@example.com' })).status, 400, 'password too short')
  t.equal((await api('POST', 'users', { username: 'eve', password: 'long-enough', email: 'not-an-email' })).status, 400)
  t.equal((await api('POST', 'users', { username: 'eve', password: 'long-enough', email: 'e@example.com', tenants: { ghost: [] } })).status, 400)

    const { code } = await codeFor(env.issuer, { client_id: 'web-app' }, 'dave', 'dave-password')
  const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.same(tokens.scope.split(' ').sort(), [MANAGE, VIEW, 'platform.tenant=demo'].sort())

  t.equal((await api('PUT', 'roles/graph-auditor', { scopes: [VIEW] })).status, 201)
  t.same((await api('GET', 'roles/graph-auditor')).json<Json>(), { name: 'graph-auditor', scopes: [VIEW] })
  t.same((await api('GET', 'roles')).json<Json>()['graph-auditor'], [VIEW])
  t.equal((await api('PUT', 'users/dave', { tenants: { demo: ['graph-auditor'] } })).status, 200)
  const refreshed = await tokenOk(env.issuer, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, WEB_AUTH)
  t.equal(refreshed.scope, `${VIEW} platform.tenant=demo`, 'a role taken away is not given back by an old refresh token')

  t.equal((await api('PUT', 'users/dave', { username: 'david', password: 'a-new-password' })).status, 200)
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'password', username: 'dave', password: 'dave-password' })).status, 400, 'old username gone')
  const pw = await tokenOk(env.issuer, { grant_type: 'password', username: 'david', password: 'a-new-password' })
  t.equal(pw.scope, `${VIEW} platform.tenant=demo`)

  t.equal((await api('DELETE', 'users/dave')).status, 204)
  t.equal((await call('GET', `${env.issuer}/tokeninfo?access_token=${pw.access_token}`)).status, 401, 'access tokens end with the user')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, WEB_AUTH)).status, 400, 'refresh tokens too')
  t.equal((await api('GET', 'users/dave')).status, 404)
  t.equal((await api('DELETE', 'roles/graph-auditor')).status, 204)
  t.equal((await api('GET', 'roles/graph-auditor')).status, 404)
})
