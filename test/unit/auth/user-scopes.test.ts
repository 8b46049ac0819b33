// Scope rules of user grants (spec 1.5, 4, 5.7): membership, roles per
// tenant, subscriptions, the tenant selection of each flow, platform.org and
// platform.no_tenant, openid; and the refresh narrowing.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { authModels } from '../../../src/auth/models/index'
import { openAuthStore, type ClientRecord, type UserRecord } from '../../../src/auth/models/auth-store'
import { narrowScopes } from '../../../src/auth/endpoints/grants/refresh-token'
import { grantScopes, parseScopeRequest, plainScopes, scopeString, targetOf, userGrant, userGrantFor } from '../../../src/auth/helpers/scopes'
import { ApiError } from '../../../src/core/errors'

const VIEW = 'platform.profile_graph_view'
const MANAGE = 'platform.profile_graph_manage'

const dir = mkdtempSync(join(tmpdir(), 'user-scopes-test-'))
const store = openAuthStore(dir)
const models = authModels(store)
t.teardown(async () => {
  await store.env.close()
  rmSync(dir, { recursive: true, force: true })
})

const client: ClientRecord = {
  client_id: 'web', tenant: 'demo', secret: undefined, redirect_uris: ['https://app.example/cb'], scopes: [VIEW, MANAGE], grant_types: ['authorization_code', 'implicit'],
}
const user = (tenants: Record<string, string[]>): UserRecord => ({
  id: 'u1', username: 'u', email: 'u@example.com', tenants, password: { alg: 'scrypt', salt: '', hash: '', N: 1, r: 1, p: 1 },
})

t.before(async () => {
  for (const [id, org] of [['demo', 'demo-org'], ['acme', 'acme-org'], ['acme-eu', 'acme-org'], ['globex', 'globex-org']]) await store.tenants.put(id!, { id: id!, org: org! })
  await store.packages.put('pg', { id: 'pg', version: '1', provider: { id: 'demo', org: 'demo-org' }, includedServices: [{ id: 's', name: 'S', scopes: [VIEW, MANAGE] }] })
  await store.packages.put('pg-read', { id: 'pg-read', version: '1', provider: { id: 'demo', org: 'demo-org' }, includedServices: [{ id: 'r', name: 'R', scopes: [VIEW] }] })
  await store.subscriptions.put('a', { id: 'a', tenant: 'acme', package: 'pg' })
  await store.subscriptions.put('b', { id: 'b', tenant: 'acme-eu', package: 'pg-read' })
  await store.roles.put('reader', [VIEW])
  await store.roles.put('writer', [VIEW, MANAGE])
  await store.roles.put('admin', ['platform.admin'])
})

function refused(t: tap.Test, fn: () => unknown, error: string, pattern: RegExp): void {
  const err = t.throws(fn) as ApiError
  t.ok(err instanceof ApiError)
  t.equal(err.oauth?.error, error)
  t.match(err.message, pattern)
}

t.test('roles in the tenant limit the client scopes', async (t) => {
  t.same(userGrant(models, client, user({ demo: ['reader'] }), null, 'code'), { tenant: 'demo', scopes: [VIEW] })
  t.same(userGrant(models, client, user({ demo: ['writer'] }), `${MANAGE}`, 'code'), { tenant: 'demo', scopes: [MANAGE] })
  t.same(userGrant(models, client, user({ demo: ['admin'] }), null, 'code'), { tenant: 'demo', scopes: [] }, 'a role scope the client lacks')
  t.same(userGrant(models, client, user({ demo: [] }), null, 'code'), { tenant: 'demo', scopes: [] }, 'a member without roles')
  t.same(userGrant(models, client, user({ demo: ['ghost-role'] }), null, 'code'), { tenant: 'demo', scopes: [] }, 'an unknown role gives nothing')
})

t.test('openid is a protocol scope: granted when asked, and alone it names no service scope', async (t) => {
  t.same(userGrant(models, client, user({ demo: ['writer'] }), 'openid', 'code'), { tenant: 'demo', scopes: [VIEW, MANAGE, 'openid'] })
  t.same(userGrant(models, client, user({ demo: ['writer'] }), `openid ${VIEW}`, 'code'), { tenant: 'demo', scopes: [VIEW, 'openid'] })
})

t.test('profile and email are granted beside openid (the ID token carries their claims), and mean nothing without it', async (t) => {
  t.same(userGrant(models, client, user({ demo: ['reader'] }), 'email openid profile', 'code'), { tenant: 'demo', scopes: [VIEW, 'openid', 'profile', 'email'] })
  t.same(userGrant(models, client, user({ demo: ['reader'] }), `openid profile ${VIEW}`, 'implicit'), { tenant: 'demo', scopes: [VIEW, 'openid', 'profile'] })
  t.same(userGrant(models, client, user({ demo: ['reader'] }), 'profile email', 'code'), { tenant: 'demo', scopes: [] }, 'without openid: not granted')
})

t.test('code flow: the client tenant; another tenant needs membership and a subscription', async (t) => {
  refused(t, () => userGrant(models, client, user({ acme: ['writer'] }), null, 'code'), 'access_denied', /not a member of tenant "demo"/)
  t.same(userGrant(models, client, user({ acme: ['writer'] }), 'platform.tenant=acme', 'code'), { tenant: 'acme', scopes: [VIEW, MANAGE] })
  t.same(userGrant(models, client, user({ 'acme-eu': ['writer'] }), 'platform.tenant=acme-eu', 'code'), { tenant: 'acme-eu', scopes: [VIEW] })
  refused(t, () => userGrant(models, client, user({ globex: ['writer'] }), 'platform.tenant=globex', 'code'), 'invalid_scope', /no subscription/)
  t.same(userGrant(models, client, user({ demo: ['reader'] }), 'platform.no_tenant', 'code'), { tenant: 'demo', scopes: [VIEW] }, 'no_tenant: the client tenant')
  refused(t, () => userGrant(models, client, user({ acme: ['writer'] }), 'platform.org=acme-org', 'code'), 'invalid_scope', /not supported/)
})

t.test('implicit flow: the only tenant, none, several', async (t) => {
  t.same(userGrant(models, client, user({ acme: ['reader'] }), null, 'implicit'), { tenant: 'acme', scopes: [VIEW] })
  refused(t, () => userGrant(models, client, user({}), null, 'implicit'), 'access_denied', /belongs to no tenant/)
  t.same(userGrant(models, client, user({ acme: ['writer'], demo: ['reader'] }), null, 'implicit'), { tenant: 'demo', scopes: [VIEW] }, "several: the client's tenant")
  refused(t, () => userGrant(models, client, user({ acme: ['writer'], 'acme-eu': ['reader'] }), null, 'implicit'), 'access_denied', /several tenants/)
  t.same(userGrant(models, client, user({ acme: ['writer'] }), 'openid platform.no_tenant', 'implicit'), { tenant: undefined, scopes: ['openid'] })
})

t.test('platform.org: the union over the member tenants of that organization', async (t) => {
  const u = user({ acme: ['reader'], 'acme-eu': ['writer'], demo: ['writer'] })
  t.same(userGrant(models, client, u, 'platform.org=acme-org', 'implicit'), { tenant: undefined, org: 'acme-org', scopes: [VIEW] })
  const w = user({ acme: ['writer'] })
  t.same(userGrant(models, client, w, 'platform.org=acme-org', 'password'), { tenant: undefined, org: 'acme-org', scopes: [VIEW, MANAGE] })
  refused(t, () => userGrant(models, client, w, 'platform.org=globex-org', 'password'), 'invalid_scope', /organization "globex-org"/)
  refused(t, () => userGrant(models, client, w, 'platform.org=acme-org platform.no_tenant', 'password'), 'invalid_scope', /cannot be combined/)
  refused(t, () => userGrant(models, client, w, 'platform.org=a platform.org=b', 'password'), 'invalid_scope', /only one platform.org/)
  refused(t, () => userGrant(models, client, w, 'platform.org=', 'password'), 'invalid_scope', /needs an organization id/)
})

t.test('password grant without a client: what the tenant owns or subscribed to', async (t) => {
  t.same(userGrant(models, undefined, user({ demo: ['writer'] }), null, 'password'), { tenant: 'demo', scopes: [VIEW, MANAGE] })
  t.same(userGrant(models, undefined, user({ 'acme-eu': ['writer'] }), null, 'password'), { tenant: 'acme-eu', scopes: [VIEW] })
  t.same(userGrant(models, undefined, user({ globex: ['writer'] }), null, 'password'), { tenant: 'globex', scopes: [] }, 'nothing subscribed')
  refused(t, () => userGrant(models, undefined, user({ demo: [], acme: [] }), null, 'password'), 'invalid_scope', /several tenants/)
  t.same(userGrant(models, client, user({ demo: ['writer'], acme: ['writer'] }), null, 'password'), { tenant: 'demo', scopes: [VIEW, MANAGE] }, "with a client: the client's parent tenant")
})

t.test('scope strings and stored scopes', async (t) => {
  t.equal(scopeString({ tenant: undefined, org: 'o', scopes: [VIEW] }), `${VIEW} platform.org=o`)
  t.equal(scopeString({ tenant: undefined, scopes: ['openid'] }), 'openid platform.no_tenant')
  t.same(grantScopes({ tenant: 'demo', scopes: [] }), ['platform.tenant=demo'])
  t.same(plainScopes([VIEW, 'platform.tenant=x', 'platform.no_tenant', 'platform.org=y', 'openid']), [VIEW, 'openid'])
  t.same(targetOf({ tenant: 'a' }), { tenant: 'a' })
  t.same(targetOf({ tenant: undefined, org: 'o' }), { org: 'o' })
  t.same(targetOf({ tenant: undefined }), { none: true })
  t.same(parseScopeRequest('  a  b a ', true), { tenant: undefined, noTenant: false, org: undefined, asked: ['a', 'b'] })
  t.same(userGrantFor(models, client, user({ demo: ['writer'] }), { tenant: 'demo' }, [], 'code'), { tenant: 'demo', scopes: [VIEW, MANAGE] }, 'an empty ask is no ask')
})

t.test('refresh narrowing: the intersection, never more; the tenant may not change', async (t) => {
  const record = { tenant: 'demo', scopes: [VIEW, MANAGE, 'openid', 'platform.tenant=demo'] }
  t.same(narrowScopes(record, undefined), [VIEW, MANAGE, 'openid'])
  t.same(narrowScopes(record, VIEW), [VIEW])
  t.same(narrowScopes(record, `${VIEW} platform.admin`), [VIEW])
  t.same(narrowScopes(record, 'platform.admin'), [])
  t.same(narrowScopes(record, 'platform.tenant=demo'), [VIEW, MANAGE, 'openid'])
  refused(t, () => narrowScopes(record, 'platform.tenant=acme'), 'invalid_scope', /tenant "demo", not "acme"/)
  refused(t, () => narrowScopes(record, 'platform.org=x'), 'invalid_scope', /not for organization/)
})
