import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { authModels } from '../../../src/auth/models/index'
import { openAuthStore, type ClientRecord } from '../../../src/auth/models/auth-store'
import { clientCredentialsGrant, scopeString, splitScope } from '../../../src/auth/helpers/scopes'
import { ApiError } from '../../../src/core/errors'

const VIEW = 'platform.profile_graph_view'
const MANAGE = 'platform.profile_graph_manage'
const EXTRA = 'demo.internal_tools'

const dir = mkdtempSync(join(tmpdir(), 'scopes-test-'))
const store = openAuthStore(dir)
const models = authModels(store)
t.teardown(async () => {
  await store.env.close()
  rmSync(dir, { recursive: true, force: true })
})

const client: ClientRecord = {
  client_id: 'demo-enricher', tenant: 'demo', secret: { alg: 'sha256', hash: 'x' },
  redirect_uris: [], scopes: [VIEW, MANAGE, EXTRA], grant_types: ['client_credentials'],
}

t.before(async () => {
  for (const [id, org] of [['demo', 'demo-org'], ['acme', 'acme-org'], ['globex', 'globex-org'], ['initech', 'initech-org']]) {
    await store.tenants.put(id!, { id: id!, org: org! })
  }
  // demo provides the profile graph (view + manage only); zeta provides something else.
  await store.packages.put('profile-graph', {
    id: 'profile-graph', version: '1.0.0', provider: { id: 'demo', org: 'demo-org' },
    includedServices: [{ id: 'pg', name: 'Profile graph', scopes: [VIEW, MANAGE] }],
  })
  await store.packages.put('reader-only', {
    id: 'reader-only', version: '1.0.0', provider: { id: 'demo', org: 'demo-org' },
    includedServices: [{ id: 'pg-read', name: 'Profile graph reader', scopes: [VIEW] }],
  })
  await store.packages.put('zeta-tools', {
    id: 'zeta-tools', version: '2.0.0', provider: { id: 'zeta', org: 'zeta-org' },
    includedServices: [{ id: 'zt', name: 'Zeta', scopes: [VIEW, MANAGE, EXTRA] }],
  })
  await store.subscriptions.put('acme-pg', { id: 'acme-pg', tenant: 'acme', package: 'profile-graph' })
  await store.subscriptions.put('initech-reader', { id: 'initech-reader', tenant: 'initech', package: 'reader-only' })
  // globex subscribes only to a package of another provider.
  await store.subscriptions.put('globex-zeta', { id: 'globex-zeta', tenant: 'globex', package: 'zeta-tools' })
  await store.clients.put(client.client_id, client)
})

function invalidScope(t: tap.Test, scope: string, pattern: RegExp): void {
  const err = t.throws(() => clientCredentialsGrant(models, client, scope), scope) as ApiError
  t.ok(err instanceof ApiError)
  t.equal(err.status, 400)
  t.equal(err.type, 'bad_request')
  t.equal(err.oauth?.error, 'invalid_scope')
  t.match(err.oauth?.error_description, pattern)
  t.equal(err.message, err.oauth?.error_description)
}

t.test('splitScope', async (t) => {
  t.same(splitScope(null), [])
  t.same(splitScope(''), [])
  t.same(splitScope('a b'), ['a', 'b'])
  t.same(splitScope('  a   b  '), ['a', 'b'], 'repeated spaces give no empty scopes')
  t.same(splitScope('platform.tenant=acme'), ['platform.tenant=acme'])
})

t.test('the stored records are read back (sanity of the fixture)', async (t) => {
  t.same(store.clients.get('demo-enricher'), client)
  t.equal(store.packages.get('profile-graph')?.provider.id, 'demo')
})

t.test('no scope: the client tenant and every client scope', async (t) => {
  t.same(clientCredentialsGrant(models, client, null), { tenant: 'demo', scopes: [VIEW, MANAGE, EXTRA] })
  t.same(clientCredentialsGrant(models, client, ''), { tenant: 'demo', scopes: [VIEW, MANAGE, EXTRA] })
})

t.test('platform.no_tenant: the client tenant', async (t) => {
  t.same(clientCredentialsGrant(models, client, 'platform.no_tenant'), { tenant: 'demo', scopes: [VIEW, MANAGE, EXTRA] })
  t.same(clientCredentialsGrant(models, client, `platform.no_tenant ${VIEW}`), { tenant: 'demo', scopes: [VIEW] })
})

t.test("platform.tenant=<own tenant>", async (t) => {
  t.same(clientCredentialsGrant(models, client, 'platform.tenant=demo'), { tenant: 'demo', scopes: [VIEW, MANAGE, EXTRA] })
  t.same(clientCredentialsGrant(models, client, `${MANAGE} platform.tenant=demo`), { tenant: 'demo', scopes: [MANAGE] })
})

t.test('platform.tenant=<subscribed tenant>: limited to the package scopes', async (t) => {
  t.same(clientCredentialsGrant(models, client, 'platform.tenant=acme'), { tenant: 'acme', scopes: [VIEW, MANAGE] })
  t.same(clientCredentialsGrant(models, client, `platform.tenant=acme ${VIEW}`), { tenant: 'acme', scopes: [VIEW] })
  t.same(clientCredentialsGrant(models, client, `platform.tenant=acme ${EXTRA}`), { tenant: 'acme', scopes: [] },
    'a client scope the subscription does not give is dropped')
  t.same(clientCredentialsGrant(models, client, 'platform.tenant=initech'), { tenant: 'initech', scopes: [VIEW] }, 'a reader-only package gives view only')
  t.same(clientCredentialsGrant(models, client, `platform.tenant=initech ${MANAGE} ${VIEW}`), { tenant: 'initech', scopes: [VIEW] })
})

t.test('an unsubscribed tenant is invalid_scope', async (t) => {
  invalidScope(t, 'platform.tenant=globex', /tenant "globex" has no subscription to the services of tenant "demo"/)
  invalidScope(t, 'platform.tenant=nobody', /tenant "nobody" has no subscription/)
})

t.test('platform.org is invalid_scope', async (t) => {
  invalidScope(t, 'platform.org=demo-org', /platform.org is not supported/)
  invalidScope(t, `${VIEW} platform.org=acme-org platform.tenant=acme`, /platform.org is not supported/)
})

t.test('two tenant scopes are invalid_scope', async (t) => {
  invalidScope(t, 'platform.tenant=demo platform.tenant=acme', /only one platform.tenant scope/)
  invalidScope(t, 'platform.tenant=acme platform.tenant=acme', /only one platform.tenant scope/)
})

t.test('platform.tenant with platform.no_tenant, or with no tenant id', async (t) => {
  invalidScope(t, 'platform.tenant=acme platform.no_tenant', /cannot be combined with platform.no_tenant/)
  invalidScope(t, 'platform.tenant=', /platform.tenant needs a tenant id/)
})

t.test('asked scopes are intersected with the client scopes', async (t) => {
  t.same(clientCredentialsGrant(models, client, `${VIEW} platform.admin`), { tenant: 'demo', scopes: [VIEW] })
  t.same(clientCredentialsGrant(models, client, 'platform.admin openid'), { tenant: 'demo', scopes: [] })
  t.same(clientCredentialsGrant(models, client, `${MANAGE} ${VIEW} ${MANAGE}`), { tenant: 'demo', scopes: [MANAGE, VIEW] }, 'no duplicates, asked order kept')
  const narrow: ClientRecord = { ...client, client_id: 'narrow', scopes: [VIEW] }
  t.same(clientCredentialsGrant(models, narrow, null), { tenant: 'demo', scopes: [VIEW] })
  t.same(clientCredentialsGrant(models, narrow, `${VIEW} ${MANAGE}`), { tenant: 'demo', scopes: [VIEW] })
  t.same(clientCredentialsGrant(models, narrow, `platform.tenant=acme ${MANAGE}`), { tenant: 'acme', scopes: [] })
})

t.test('scopeString ends with the tenant scope', async (t) => {
  t.equal(scopeString({ tenant: 'acme', scopes: [VIEW, MANAGE] }), `${VIEW} ${MANAGE} platform.tenant=acme`)
  t.equal(scopeString({ tenant: 'demo', scopes: [] }), 'platform.tenant=demo')
})
