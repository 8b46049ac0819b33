// The client-credentials token endpoint and the bearer check of every graph
// call: 401 without a live token, 403 without the scope or for another tenant.
import t from 'tap'
import { join } from 'node:path'
import { contentsUnder } from '../helpers/files'
import { Graph, call, createConsent } from '../helpers/client'
import { getToken, serverForFile, serverForTest, type Server } from '../helpers/server'
import { sleep } from '../../bench/wait'

const fixture = serverForFile(t)
let server: Server
t.before(() => {
  server = fixture.server
})

type Body = Record<string, unknown>
const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const form = { 'content-type': 'application/x-www-form-urlencoded' }
const tokenUrl = (): string => `${server.url}/oauth2/v1/token`

t.test('client_credentials with Basic: the spec token response', async (t) => {
  const res = await call('POST', tokenUrl(), { ...form, authorization: basic('demo-enricher', 'demo-secret') }, 'grant_type=client_credentials')
  t.equal(res.status, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json<Body>()
  t.equal(body.token_type, 'Bearer')
  t.equal(body.expires_in, 3600)
  t.match(body.access_token, /^[A-Za-z0-9_-]{51}$/, 'issue time and 256 random bits, base64url')
  t.same((body.scope as string).split(' ').sort(), ['platform.profile_graph_manage', 'platform.profile_graph_view', 'platform.tenant=demo'])
  t.equal(body.refresh_token, undefined)
})

t.test('client_credentials with body credentials', async (t) => {
  const res = await call('POST', tokenUrl(), form, 'grant_type=client_credentials&client_id=demo-enricher&client_secret=demo-secret')
  t.equal(res.status, 200)
})

t.test('token endpoint errors are RFC 6749 errors with the platform fields', async (t) => {
  const cases: [string, Promise<{ status: number; text: string }>, number, string][] = [
    ['wrong secret', call('POST', tokenUrl(), { ...form, authorization: basic('demo-enricher', 'nope') }, 'grant_type=client_credentials'), 401, 'invalid_client'],
    ['unknown client', call('POST', tokenUrl(), { ...form, authorization: basic('who', 'nope') }, 'grant_type=client_credentials'), 401, 'invalid_client'],
    ['no credentials', call('POST', tokenUrl(), form, 'grant_type=client_credentials'), 401, 'invalid_client'],
    ['no grant_type', call('POST', tokenUrl(), { ...form, authorization: basic('demo-enricher', 'demo-secret') }, ''), 400, 'invalid_request'],
    ['unsupported grant', call('POST', tokenUrl(), { ...form, authorization: basic('demo-enricher', 'demo-secret') }, 'grant_type=magic'), 400, 'unsupported_grant_type'],
    ['json body', call('POST', tokenUrl(), { 'content-type': 'application/json', authorization: basic('demo-enricher', 'demo-secret') }, '{}'), 415, 'invalid_request'],
    ['unsubscribed tenant', call('POST', tokenUrl(), { ...form, authorization: basic('demo-enricher', 'demo-secret') }, 'grant_type=client_credentials&scope=platform.tenant%3Dnobody'), 400, 'invalid_scope'],
    ['platform.org', call('POST', tokenUrl(), { ...form, authorization: basic('demo-enricher', 'demo-secret') }, 'grant_type=client_credentials&scope=platform.org%3Dx'), 400, 'invalid_scope'],
  ]
  for (const [what, pending, status, error] of cases) {
    const res = await pending
    const body = JSON.parse(res.text) as Body
    t.equal(res.status, status, what)
    t.equal(body.error, error, `${what}: error`)
    t.type(body.error_description, 'string', `${what}: error_description`)
    t.equal(body.status, status, `${what}: status field`)
    t.type(body.type, 'string', `${what}: type field`)
  }
  t.equal((await call('GET', tokenUrl())).status, 405)
})

t.test('graph calls need a live bearer token: 401 with the error body', async (t) => {
  const url = `${server.url}/graph/v1/demo/nodes/core/customer/x`
  for (const [what, headers] of [
    ['no header', {}],
    ['not bearer', { authorization: basic('demo-enricher', 'demo-secret') }],
    ['unknown token', { authorization: 'Bearer not-a-token' }],
    ['empty bearer', { authorization: 'Bearer ' }],
  ] as [string, Record<string, string>][]) {
    const res = await call('GET', url, headers)
    t.equal(res.status, 401, what)
    const body = res.json<Body>()
    t.equal(body.type, 'insufficient_credentials', what)
    t.equal(body.status, 401)
    t.type(body.message, 'string')
    t.type(body.moreInfo, 'string')
  }
})

t.test('a token without the manage scope can read but not write (403 insufficient_scope)', async (t) => {
  const full = fixture.graph
  await full.put('nodes/core/customer/s1', { name: 'S' })
  const viewOnly = new Graph(server.url, 'demo', await getToken(server.url, 'platform.profile_graph_view'), fixture.consent)
  t.equal((await viewOnly.get('nodes/core/customer/s1')).status, 200)
  const res = await viewOnly.put('nodes/core/customer/s1', { name: 'T' })
  t.equal(res.status, 403)
  t.equal(res.json<Body>().type, 'insufficient_scope')
  t.equal((await viewOnly.delete('nodes/core/customer/s1')).status, 403)
  t.equal((await full.get('nodes/core/customer/s1')).json<Body>().name, 'S')
  const manageOnly = new Graph(server.url, 'demo', await getToken(server.url, 'platform.profile_graph_manage'))
  t.equal((await manageOnly.get('nodes/core/customer/s1')).status, 403, 'manage does not imply view')
})

t.test("the token's tenant must be the path's tenant (403 forbidden)", async (t) => {
  const demo = await getToken(server.url)
  const res = await new Graph(server.url, 'acme', demo).get('nodes/core/customer/x')
  t.equal(res.status, 403)
  t.equal(res.json<Body>().type, 'forbidden')
  // acme subscribed to the demo tenant's package, so the demo client may get an acme token.
  const acme = await getToken(server.url, 'platform.tenant=acme')
  const ga = new Graph(server.url, 'acme', acme, await createConsent(server.url, 'acme', acme, 'acme-subject'))
  t.equal((await ga.put('nodes/core/customer/a1', { name: 'A' })).status, 204)
  t.equal((await ga.get('nodes/core/customer/a1')).status, 200)
  t.equal((await new Graph(server.url, 'demo', acme).get('nodes/core/customer/a1')).status, 403)
  t.equal((await new Graph(server.url, 'demo', demo).get('nodes/core/customer/a1')).status, 404, 'tenants do not see each other')
})

t.test('tokens are stored only as hashes', async (t) => {
  const token = await getToken(server.url)
  const files = contentsUnder(join(server.dataDir, 'data'))
  t.ok(files.some((f) => f.path.endsWith('data.mdb')), 'the scan reads the data files')
  t.same(files.filter((f) => f.bytes.includes(Buffer.from(token))).map((f) => f.path), [], 'no file holds the raw token')
})

t.test('an expired token is refused at once', async (t) => {
  const { server: short } = await serverForTest(t, { env: { ACCESS_TOKEN_TTL: '1' } })
  const g = new Graph(short.url, 'demo', await getToken(short.url))
  t.equal((await g.get('nodes/core/customer/x')).status, 404, 'valid while fresh')
  await sleep(2500)
  const res = await g.get('nodes/core/customer/x')
  t.equal(res.status, 401)
  t.equal(res.json<Body>().type, 'insufficient_credentials')
})
