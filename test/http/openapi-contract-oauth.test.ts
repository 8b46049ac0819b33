// The OAuth / OpenID Connect service and the root routes against the
// server's own GET /openapi.json: every operation is called with a valid
// request and at least one invalid one (no or bad credentials, bad input);
// each answer's status must be declared for the operation, with its
// headers, and its body must fit the schema declared for that status and
// media type. An operation of the document left out fails too.
import t from 'tap'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { Contract, type Asserts, type Case, type Document } from '../helpers/openapi-contract'
import { call, type Answer, type Headers } from '../helpers/client'
import {
  adminToken, basic, clientToken, FORM, hiddenFields, oauthServerForFile, redirectParams, UserAgent, VIEW, WEB_AUTH, type TokenAnswer,
} from '../helpers/oauth'
import { startUpstreamOp, type UpstreamOp } from '../helpers/upstream-op'

const env = oauthServerForFile(t)
const PREFIX = '/oauth2/v1'
const JSON_TYPE = { 'content-type': 'application/json' }
const CALLBACK = 'http://127.0.0.1:65530/callback'
const VERIFIER = 'contract-verifier-of-forty-three-characters-at-least'
const UPSTREAM_SECRET = 'upstream-contract-secret'

const op = (method: string, path: string): string => `${method} ${PREFIX}/${path}`
const form = (fields: Record<string, string>, headers: Headers = {}): Pick<Case, 'headers' | 'body'> =>
  ({ headers: { ...FORM, ...headers }, body: new URLSearchParams(fields).toString() })
const json = (body: unknown, headers: Headers = {}): Pick<Case, 'headers' | 'body'> => ({ headers: { ...JSON_TYPE, ...headers }, body: JSON.stringify(body) })
const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` })
const location = (answer: Answer): string => String(answer.headers.location)

let contract: Contract
let admin: Headers
/** A token of a client without platform.admin: the admin API's 403. */
let notAdmin: Headers
let upstream: UpstreamOp | undefined

t.before(async () => {
  contract = new Contract(JSON.parse((await call('GET', `${env.server.url}/openapi.json`)).text) as Document)
  admin = bearer(await adminToken(env.issuer))
  notAdmin = bearer(await clientToken(env.issuer, 'web-app', 'web-secret'))
})
t.teardown(() => upstream?.close())

type Check = (c: Case, status: number) => Promise<Answer>
type Both = (c: Case, valid: Headers, status: number, ...invalid: [Partial<Case>, number][]) => Promise<Answer>

/** `check` sends a case and holds its answer to the document and to `status`; `both` sends it with `valid` headers, without them (401), then with `invalid` changes. */
function checker(t: Asserts): { check: Check; both: Both } {
  const check: Check = (c, status) => contract.expect(t, c, status, ` (${c.url.slice(env.issuer.length)})`)
  const both: Both = async (c, valid, status, ...invalid) => {
    const answer = await check({ ...c, headers: { ...valid, ...c.headers } }, status)
    await check(c, 401)
    for (const [change, bad] of invalid) await check({ ...c, ...change, headers: { ...valid, ...c.headers, ...change.headers } }, bad)
    return answer
  }
  return { check, both }
}

t.test('discovery, keys, the token endpoint with every grant, and the token endpoints around it', async (t) => {
  const { check, both } = checker(t)
  const I = env.issuer
  // Public documents without input: there is no invalid request to make of them.
  for (const path of ['.well-known/openid-configuration', '.well-known/oauth-authorization-server', '.well-known/jwks.json']) {
    await check({ op: op('GET', path), url: `${I}/${path}` }, 200)
  }

  const TOKEN = { op: op('POST', 'token'), url: `${I}/token` }
  await check({ ...TOKEN, ...form({ grant_type: 'client_credentials' }, WEB_AUTH) }, 200)
  await check({ ...TOKEN, ...form({ grant_type: 'client_credentials' }, { authorization: basic('web-app', 'wrong') }) }, 401)
  await check({ ...TOKEN, ...form({ grant_type: 'nonsense' }, WEB_AUTH) }, 400)
  await check({ ...TOKEN, ...json({ grant_type: 'client_credentials' }, WEB_AUTH) }, 415)
  await check({ ...TOKEN, ...form({ grant_type: 'password', username: 'bob', password: 'bob-password', scope: 'platform.tenant=demo' }) }, 200)
  await check({ ...TOKEN, ...form({ grant_type: 'password', username: 'bob' }) }, 400)

  // The code flow with PKCE: the sign-in page (GET), the signed-in form post (POST), the exchange.
  const ua = new UserAgent(I)
  const challenge = createHash('sha256').update(VERIFIER).digest('base64url')
  const params = { client_id: 'web-app', response_type: 'code', scope: `openid ${VIEW}`, state: 's1', nonce: 'n1', code_challenge: challenge, code_challenge_method: 'S256' }
  const page = contract.hold(t, op('GET', 'authorize'), await ua.open(params), 200, ' (sign-in page)')
  const signedIn = contract.hold(t, op('POST', 'authorize'), await ua.submit(page, 'alice', 'alice-password'), 303, ' (signed in)')
  const code = redirectParams(location(signedIn)).query.get('code') ?? ''
  const exchange = { ...TOKEN, ...form({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: VERIFIER }, WEB_AUTH) }
  const tokens = (await check(exchange, 200)).json<TokenAnswer>()
  await check({ ...TOKEN, ...form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' }, WEB_AUTH) }, 200)
  await check({ ...TOKEN, ...form({ grant_type: 'refresh_token', refresh_token: 'none' }, WEB_AUTH) }, 400)

  const AUTHORIZE = op('GET', 'authorize')
  contract.hold(t, AUTHORIZE, await ua.open({ client_id: 'web-app', response_type: 'code', state: 's2' }), 302, ' (signed in already)')
  contract.hold(t, AUTHORIZE, await ua.open({ client_id: 'spa', response_type: 'token', scope: VIEW }), 302, ' (implicit)')
  contract.hold(t, AUTHORIZE, await ua.open({ client_id: 'nobody', response_type: 'code' }), 400, ' (unknown client, a page)')
  await check({ op: AUTHORIZE, url: `${I}/authorize?client_id=nobody&response_type=code` }, 400)
  const POST_AUTHORIZE = { op: op('POST', 'authorize'), url: `${I}/authorize` }
  await check({ ...POST_AUTHORIZE, ...form({ ...hiddenFields(page.text), username: 'alice', password: 'alice-password' }) }, 403)
  await check({ ...POST_AUTHORIZE, ...json({ client_id: 'web-app' }) }, 415)

  const user = bearer(tokens.access_token)
  const INTROSPECT = { op: op('POST', 'introspect'), url: `${I}/introspect` }
  await both({ ...INTROSPECT, ...form({ token: tokens.access_token }) }, WEB_AUTH, 200, [json({ token: 'x' }, WEB_AUTH), 415])
  await check({ ...INTROSPECT, ...form({ token: 'none' }, WEB_AUTH) }, 200)

  const TOKENINFO = op('GET', 'tokeninfo')
  await check({ op: TOKENINFO, url: `${I}/tokeninfo?access_token=${tokens.access_token}` }, 200)
  await check({ op: TOKENINFO, url: `${I}/tokeninfo?access_token=none` }, 401)
  await check({ op: TOKENINFO, url: `${I}/tokeninfo` }, 400)

  await both({ op: op('GET', 'userinfo'), url: `${I}/userinfo` }, user, 200, [{ headers: notAdmin }, 403])
  await both({ op: op('POST', 'userinfo'), url: `${I}/userinfo`, ...form({}) }, user, 200, [json({}, user), 415])

  const REFRESH = { op: op('GET', 'refreshtokens'), url: `${I}/refreshtokens` }
  // one client_id at most
  const twice = `${I}/refreshtokens?client_id=a&client_id=b`
  await both(REFRESH, user, 200, [{ headers: notAdmin }, 403], [{ url: twice }, 400])

  const REVOKE = { op: op('POST', 'revoke'), url: `${I}/revoke` }
  await check({ ...REVOKE, ...form({ token: tokens.access_token }, { authorization: basic('web-app', 'wrong') }) }, 401)
  await check({ ...REVOKE, ...form({}, WEB_AUTH) }, 400)
  await check({ ...REVOKE, ...json({ token: 'x' }, WEB_AUTH) }, 415)

  const DELETE_REFRESH = { op: op('DELETE', 'refreshtokens'), url: `${I}/refreshtokens` }
  // the valid one last: it ends the user's access token too
  await check(DELETE_REFRESH, 401)
  await check({ ...DELETE_REFRESH, url: twice, headers: user }, 400)
  await check({ ...DELETE_REFRESH, headers: notAdmin }, 403)
  await check({ ...DELETE_REFRESH, headers: user }, 204)
  await check({ ...REVOKE, ...form({ token: tokens.refresh_token ?? '' }, WEB_AUTH) }, 200)
  await check(exchange, 400)
})

t.test('end_session: the confirmation page, the redirect, the programs', async (t) => {
  const { check } = checker(t)
  const I = env.issuer
  const ua = new UserAgent(I)
  const signedIn = await ua.authorize({ client_id: 'web-app', response_type: 'code', scope: 'openid' }, 'alice', 'alice-password')
  const code = redirectParams(signedIn).query.get('code') ?? ''
  const idToken = (await call('POST', `${I}/token`, { ...FORM, ...WEB_AUTH }, new URLSearchParams({ grant_type: 'authorization_code', code }).toString()))
    .json<TokenAnswer>().id_token ?? ''
  const END = op('GET', 'end_session')
  const target = encodeURIComponent(CALLBACK)
  const asked = contract.hold(t, END, await ua.send('GET', `${I}/end_session?client_id=web-app&post_logout_redirect_uri=${target}&state=bye`), 200, ' (confirm)')
  const POST_END = op('POST', 'end_session')
  const origin = new URL(I).origin
  contract.hold(t, POST_END, await ua.send('POST', `${I}/end_session`, new URLSearchParams({ client_id: 'web-app', confirm: 'A'.repeat(43) }), { origin }), 403, ' (forged)')
  contract.hold(t, POST_END, await ua.send('POST', `${I}/end_session`, new URLSearchParams(hiddenFields(asked.text)), { origin }), 303, ' (confirmed)')
  await check({ op: POST_END, url: `${I}/end_session`, ...form({ client_id: 'web-app' }) }, 204)
  await check({ op: POST_END, url: `${I}/end_session`, ...json({ client_id: 'web-app' }) }, 415)

  await ua.authorize({ client_id: 'web-app', response_type: 'code' }, 'alice', 'alice-password')
  contract.hold(t, END, await ua.send('GET', `${I}/end_session?id_token_hint=${idToken}&post_logout_redirect_uri=${target}&state=s1`), 302, ' (hint)')
  await check({ op: END, url: `${I}/end_session?client_id=web-app` }, 204)
  await check({ op: END, url: `${I}/end_session` }, 400)
  await check({ op: END, url: `${I}/end_session?client_id=web-app&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}` }, 400)
})

t.test('the subscription events and the admin API', async (t) => {
  const { check, both } = checker(t)
  const I = env.issuer
  const A = `${I}/admin`
  const adm = (method: string, path: string): Pick<Case, 'op' | 'url'> => ({ op: op(method, `admin/${path.replace(/\/[^/]+(\/secret)?$/, '/{id}$1')}`), url: `${A}/${path}` })
  const forbidden: [Partial<Case>, number] = [{ headers: notAdmin }, 403]
  const notJson: [Partial<Case>, number] = [{ headers: { ...admin, 'content-type': 'text/plain' } }, 415]

  await both({ op: op('GET', 'events'), url: `${I}/events?after=0` }, admin, 200, forbidden, [{ url: `${I}/events?schema=none` }, 400])

  await both({ ...adm('POST', 'tenants'), ...json({ id: 'contract', org: 'contract-org' }) }, admin, 201, forbidden, notJson, [json({ id: 'a b', org: 'o' }), 400])
  await both(adm('GET', 'tenants'), admin, 200, forbidden)
  await both(adm('GET', 'tenants/contract'), admin, 200, [{ url: `${A}/tenants/none` }, 404])
  await both({ ...adm('PUT', 'tenants/contract'), ...json({ org: 'contract-holding' }) }, admin, 200, [json({}), 400])
  await check({ ...adm('PUT', 'tenants/contract2'), ...json({ org: 'o' }, admin) }, 201)
  await both(adm('DELETE', 'tenants/contract2'), admin, 204, [{ url: `${A}/tenants/none` }, 404], [{ url: `${A}/tenants/demo` }, 400])

  const pkg = { version: '1', provider: { id: 'contract', org: 'contract-holding' }, includedServices: [{ id: 'contract-service', name: 'Contract', scopes: [VIEW] }] }
  await both({ ...adm('PUT', 'packages/contract-pkg'), ...json(pkg) }, admin, 201, [json({ version: 1 }), 400])
  await check({ ...adm('PUT', 'packages/contract-pkg'), ...json(pkg, admin) }, 200)
  await both(adm('GET', 'packages'), admin, 200, forbidden)
  await both(adm('GET', 'packages/contract-pkg'), admin, 200, [{ url: `${A}/packages/none` }, 404])

  await both({ ...adm('POST', 'subscriptions'), ...json({ id: 'contract-sub', tenant: 'contract', package: 'contract-pkg' }) }, admin, 201,
    [json({ tenant: 'contract', package: 'none' }), 400])
  await both(adm('GET', 'subscriptions'), admin, 200, forbidden)
  await both(adm('GET', 'subscriptions/contract-sub'), admin, 200, [{ url: `${A}/subscriptions/none` }, 404])
  await both(adm('DELETE', 'subscriptions/contract-sub'), admin, 204, [{ url: `${A}/subscriptions/none` }, 404])
  await both(adm('DELETE', 'packages/contract-pkg'), admin, 204, [{ url: `${A}/packages/none` }, 404])

  const client = { client_id: 'contract-app', tenant: 'contract', redirect_uris: [CALLBACK], scopes: [VIEW], grant_types: ['authorization_code'] }
  await both({ ...adm('POST', 'clients'), ...json(client) }, admin, 201, [json({ ...client, client_id: 'contract-2', tenant: 1 }), 400])
  await both(adm('GET', 'clients'), admin, 200, forbidden)
  await both(adm('GET', 'clients/contract-app'), admin, 200, [{ url: `${A}/clients/none` }, 404])
  await both({ ...adm('PUT', 'clients/contract-app'), ...json({ scopes: [VIEW, 'openid'] }) }, admin, 200, [json({ scopes: 'x' }), 400],
    [{ url: `${A}/clients/none` }, 404])
  await both(adm('POST', 'clients/contract-app/secret'), admin, 200, [{ url: `${A}/clients/none/secret` }, 404])
  await both(adm('DELETE', 'clients/contract-app'), admin, 204, [{ url: `${A}/clients/none` }, 404])

  const user = { username: 'contract-user', email: 'contract@example.com', password: 'contract-password', tenants: { contract: ['graph-reader'] } }
  await both({ ...adm('POST', 'users'), ...json(user) }, admin, 201, [json({ ...user, username: 'other', password: 'short' }), 400])
  await both(adm('GET', 'users'), admin, 200, forbidden)
  await both(adm('GET', 'users/contract-user'), admin, 200, [{ url: `${A}/users/none` }, 404])
  await both({ ...adm('PUT', 'users/contract-user'), ...json({ email_verified: true }) }, admin, 200, [json({ email: 1 }), 400], [{ url: `${A}/users/none` }, 404])
  await both(adm('DELETE', 'users/contract-user'), admin, 204, [{ url: `${A}/users/none` }, 404])
  await both(adm('DELETE', 'tenants/contract'), admin, 204, forbidden)

  await both({ ...adm('PUT', 'roles/contract-role'), ...json({ scopes: [VIEW] }) }, admin, 201, [json({ scopes: 'x' }), 400])
  await check({ ...adm('PUT', 'roles/contract-role'), ...json({ scopes: [] }, admin) }, 200)
  await both(adm('GET', 'roles'), admin, 200, forbidden)
  await both(adm('GET', 'roles/contract-role'), admin, 200, [{ url: `${A}/roles/none` }, 404])
  await both(adm('DELETE', 'roles/contract-role'), admin, 204, [{ url: `${A}/roles/none` }, 404])

  await both(adm('POST', 'signing-keys'), admin, 201, forbidden)
  await both(adm('GET', 'signing-keys'), admin, 200, forbidden)
  await both({ ...adm('POST', 'backups'), ...json({ to: join(env.server.dataDir, 'backup-contract') }) }, admin, 201, [json({ to: 'relative' }), 400], notJson)
})

t.test('identity providers and the federated callback', async (t) => {
  const { check, both } = checker(t)
  const I = env.issuer
  upstream = await startUpstreamOp([`${I}/idp/contract-idp/callback`], UPSTREAM_SECRET)
  const A = `${I}/admin/identity-providers`
  const ONE = op('PUT', 'admin/identity-providers/{id}')
  const provider = { issuer: upstream.issuer, client_id: 'platform', client_secret: UPSTREAM_SECRET, scopes: ['openid', 'email'], provisioning: { tenants: { demo: ['graph-reader'] } } }
  await both({ op: ONE, url: `${A}/contract-idp`, ...json(provider) }, admin, 201, [json({ ...provider, issuer: 'not a url' }), 400])
  await check({ op: ONE, url: `${A}/contract-idp`, ...json(provider, admin) }, 200)
  await both({ op: op('GET', 'admin/identity-providers'), url: A }, admin, 200, [{ headers: notAdmin }, 403])
  await both({ op: op('GET', 'admin/identity-providers/{id}'), url: `${A}/contract-idp` }, admin, 200, [{ url: `${A}/none` }, 404])

  // The browser goes upstream; the upstream refuses the user: the callback sends the browser back to the client.
  const ua = new UserAgent(I)
  const started = await ua.open({ client_id: 'web-app', response_type: 'code', state: 'fed', platform_id_provider: 'contract-idp' })
  const state = new URL(location(started)).searchParams.get('state') ?? ''
  const CALLBACK_OP = op('GET', 'idp/{id}/callback')
  contract.hold(t, CALLBACK_OP, await ua.send('GET', `${I}/idp/contract-idp/callback?state=${state}&error=access_denied`), 302, ' (refused upstream)')
  contract.hold(t, CALLBACK_OP, await ua.send('GET', `${I}/idp/contract-idp/callback?state=made-up&code=x`), 400, ' (unknown state)')
  await check({ op: CALLBACK_OP, url: `${I}/idp/contract-idp/callback?state=made-up` }, 400)

  await both({ op: op('DELETE', 'admin/identity-providers/{id}'), url: `${A}/contract-idp` }, admin, 204, [{ url: `${A}/none` }, 404])
})

t.test('the root routes', async (t) => {
  const U = env.server.url
  // Not exercised: /health/ready's 503 and /metrics' errors need a starting server or another --metrics.
  for (const path of ['/errors', '/openapi.json', '/account', '/health/live', '/health/ready', '/metrics', '/.well-known/oauth-authorization-server/oauth2/v1']) {
    await contract.expect(t, { op: `GET ${path}`, url: `${U}${path}` }, 200)
  }
  // The gateway in front of this server itself (a package of tenant demo, which the web-app's token may use).
  const pkg = { version: '1', provider: { id: 'demo', org: 'demo-org' }, includedServices: [{ id: 'self', name: 'Self', scopes: [VIEW], sourceUrl: U }] }
  const put = await call('PUT', `${env.issuer}/admin/packages/contract-gw`, { ...admin, ...JSON_TYPE }, JSON.stringify(pkg))
  t.equal(put.status, 201, 'the package behind the gateway')
  const GATEWAY = { op: 'GET /gateway/{packageId}/{serviceId}/{path}', url: `${U}/gateway/contract-gw/self/health/live` }
  const demo = bearer(await clientToken(env.issuer, 'web-app', 'web-secret', VIEW))
  await contract.expect(t, { ...GATEWAY, headers: demo }, 200)
  await contract.expect(t, GATEWAY, 401)
  await contract.expect(t, { ...GATEWAY, headers: admin }, 403)
  await contract.expect(t, { ...GATEWAY, url: `${U}/gateway/contract-gw/none/health/live`, headers: demo }, 404)
  t.same(contract.missed('/').filter((o) => !/ \/(oauth2|graph)\//.test(o)), [], 'every root operation was exercised')
})

t.test('every OAuth operation of the document was exercised', async (t) => {
  t.same(contract.missed(PREFIX), [])
})
