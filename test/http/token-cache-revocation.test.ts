// Access tokens are verified once and then served from memory (the record
// cache by hash, the hash by token). Every way a token ends must take effect
// before its answer: each case below uses the token on the graph first (so it
// is cached), ends it, and finds it refused at once.
import t from 'tap'

type Assert = Pick<typeof t, 'equal' | 'not'>
import { adminToken, basic, call, codeFor, oauthServerForFile, postForm, tokenOk, VIEW, WEB_AUTH, type Json } from '../helpers/oauth'

const env = oauthServerForFile(t)
let admin: string
t.before(async () => {
  admin = await adminToken(env.issuer)
})

const api = (method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<{ status: number }> =>
  call(method, `${env.issuer}/admin/${path}`, {
    authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  }, body === undefined ? undefined : JSON.stringify(body))

const graphStatus = async (token: string): Promise<number> =>
  (await call('GET', `${env.server.url}/graph/v1/demo/nodes/core/customer/x`, { authorization: `Bearer ${token}` })).status

/** A new client of tenant demo with a generated secret, and a token of it already used (cached). */
async function cachedClientToken(t: Assert, id: string): Promise<{ token: string; secret: string }> {
  const res = await call('POST', `${env.issuer}/admin/clients`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    JSON.stringify({ client_id: id, tenant: 'demo', redirect_uris: [], scopes: [VIEW], grant_types: ['client_credentials'] }))
  t.equal(res.status, 201)
  const secret = res.json<Json>().client_secret as string
  const token = (await tokenOk(env.issuer, { grant_type: 'client_credentials' }, { authorization: basic(id, secret) })).access_token
  t.not(await graphStatus(token), 401, 'accepted (and now cached)')
  t.not(await graphStatus(token), 401, 'accepted again')
  return { token, secret }
}

t.test('revoke', async (t) => {
  const { token, secret } = await cachedClientToken(t, 'cache-revoke')
  t.equal((await postForm(`${env.issuer}/revoke`, { token }, { authorization: basic('cache-revoke', secret) })).status, 200)
  t.equal(await graphStatus(token), 401)
})

t.test('deleting the client', async (t) => {
  const { token } = await cachedClientToken(t, 'cache-delete')
  t.equal((await api('DELETE', 'clients/cache-delete')).status, 204)
  t.equal(await graphStatus(token), 401)
})

t.test("moving the client to another tenant ends its tokens for the tenant it left", async (t) => {
  const { token } = await cachedClientToken(t, 'cache-move')
  t.equal((await api('POST', 'tenants', { id: 'cache-elsewhere', org: 'demo-org' })).status, 201)
  t.equal((await api('PUT', 'clients/cache-move', { tenant: 'cache-elsewhere' })).status, 200)
  t.equal(await graphStatus(token), 401)
})

t.test('deleting a user, and a user leaving a tenant, end their tokens', async (t) => {
  for (const [user, change] of [['cache-gone', 'delete'], ['cache-leaver', 'leave']] as const) {
    t.equal((await api('POST', 'users', { username: user, password: `${user}-password`, email: `${user}@example.com`, tenants: { demo: ['graph-writer'] } })).status, 201)
    const token = (await tokenOk(env.issuer, { grant_type: 'password', username: user, password: `${user}-password` })).access_token
    t.not(await graphStatus(token), 401, `${user}: accepted (and now cached)`)
    if (change === 'delete') t.equal((await api('DELETE', `users/${user}`)).status, 204)
    else t.equal((await api('PUT', `users/${user}`, { tenants: {} })).status, 200)
    t.equal(await graphStatus(token), 401, `${user}: refused after the ${change}`)
  }
})

t.test('ending refresh tokens ends the access tokens issued with them', async (t) => {
  t.equal((await api('POST', 'users', { username: 'cache-refresh', password: 'cache-refresh-password', email: 'cr@example.com', tenants: { demo: ['graph-writer'] } })).status, 201)
  const { code } = await codeFor(env.issuer, { client_id: 'web-app' }, 'cache-refresh', 'cache-refresh-password')
  const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.not(await graphStatus(tokens.access_token), 401)
  t.equal((await call('DELETE', `${env.issuer}/refreshtokens`, { authorization: `Bearer ${tokens.access_token}` })).status, 204)
  t.equal(await graphStatus(tokens.access_token), 401)
})
