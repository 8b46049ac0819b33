// The built-in client of the account page: made from PUBLIC_URL, found by
// its id beside the stored clients, serving every tenant of its user without
// a subscription and with no service scope; identity only without a tenant
// scope; the bootstrap file may not declare its id.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ACCOUNT_CLIENT_ID, accountClient } from '../../../src/auth/models/account-client'
import type { UserRecord } from '../../../src/auth/models/auth-store'
import { Clients } from '../../../src/auth/models/clients'
import { authModels } from '../../../src/auth/models/index'
import { checkBootstrap } from '../../../src/auth/helpers/bootstrap-checks'
import { userGrant } from '../../../src/auth/helpers/scopes'
import { parseBootstrap } from '../../../src/bootstrap/bootstrap-file'
import { ApiError } from '../../../src/core/errors'
import { tempAuthStore } from '../../helpers/auth-store'

const VIEW = 'platform.profile_graph_view'
const MANAGE = 'platform.profile_graph_manage'
const client = accountClient('https://shop.example')
const user: UserRecord = {
  id: 'u1', username: 'u', email: 'u@example.com', tenants: { demo: ['writer'], acme: ['writer'] },
  password: { alg: 'scrypt', salt: '', hash: '', N: 1, r: 1, p: 1 },
}

t.test('the client: public, code flow only, its redirect URI the page under PUBLIC_URL, no scopes', async (t) => {
  t.same(client, {
    client_id: ACCOUNT_CLIENT_ID, tenant: '', secret: undefined, redirect_uris: ['https://shop.example/account'], scopes: [], grant_types: ['authorization_code'],
  })
})

t.test('found by its id beside the stored clients, never listed with them', async (t) => {
  const { store } = tempAuthStore(t)
  await store.clients.put('web', { ...client, client_id: 'web', tenant: 'demo' })
  const clients = new Clients(store, client)
  t.equal(clients.find(ACCOUNT_CLIENT_ID), client)
  t.ok(clients.exists(ACCOUNT_CLIENT_ID))
  t.equal(clients.find('web')?.tenant, 'demo')
  t.same(clients.all().map((c) => c.client_id), ['web'])
  t.equal(new Clients(store).find(ACCOUNT_CLIENT_ID), undefined, 'without it (the bootstrap checks), nothing by that id')
})

t.test('every tenant of the user, no subscription, no service scope whatever the roles', async (t) => {
  const { store } = tempAuthStore(t)
  const models = authModels(store)
  for (const id of ['demo', 'acme', 'globex']) await store.tenants.put(id, { id, org: `${id}-org` })
  await store.roles.put('writer', [VIEW, MANAGE])
  t.same(userGrant(models, client, user, 'openid platform.tenant=acme', 'code'), { tenant: 'acme', scopes: ['openid'] })
  t.same(userGrant(models, client, user, `${MANAGE} platform.tenant=demo`, 'code'), { tenant: 'demo', scopes: [] }, 'a service scope asked is not given')
  t.same(userGrant(models, client, user, 'openid profile email', 'code'), { tenant: undefined, scopes: ['openid', 'profile', 'email'] }, 'no tenant scope: identity only')
  const err = t.throws(() => userGrant(models, client, user, 'openid platform.tenant=globex', 'code')) as ApiError
  t.ok(err instanceof ApiError)
  t.equal(err.oauth?.error, 'access_denied', 'a tenant the user is not a member of is refused')
})

t.test('the bootstrap file may not declare the built-in client', async (t) => {
  const { store } = tempAuthStore(t)
  const doc = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'oauth-bootstrap.json'), 'utf8')) as { clients: Record<string, unknown>[] }
  doc.clients.push({ client_id: ACCOUNT_CLIENT_ID, tenant: 'demo', redirect_uris: ['https://shop.example/account'], scopes: [], grant_types: ['authorization_code'] })
  t.throws(() => checkBootstrap(parseBootstrap(doc), authModels(store)), /clients\[8\]: client "platform-account" is built in/)
})
