// The account page's built-in client over HTTP: the code flow with PKCE as
// the public client "platform-account", identity only without a tenant scope,
// a token per tenant of the user (no subscription, no service scope), what
// such a token may do in the graph (its user's own consents, nothing else),
// the admin API refusing its id; and GET /account's headers.
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { adminToken, call, MANAGE, oauthServerForFile, postForm, redirectParams, tokenOk, UserAgent, type Json, type TokenAnswer } from '../helpers/oauth'
import { getToken } from '../helpers/server'

const env = oauthServerForFile(t)
const CLIENT = 'platform-account'
const JSON_TYPE = { 'content-type': 'application/json' }
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

/** One signed-in browser per user, as the page's tab is. */
const agents = new Map<string, UserAgent>()

/** The page's sign-in: code flow, PKCE S256, the page as redirect URI; the location /authorize answered with. */
async function pageSignIn(username: string, scope: string, extra: Record<string, string> = {}): Promise<{ location: string; verifier: string }> {
  const agent = agents.get(username) ?? new UserAgent(env.issuer)
  agents.set(username, agent)
  const verifier = randomBytes(32).toString('base64url')
  const location = await agent.authorize({
    response_type: 'code', client_id: CLIENT, redirect_uri: `${env.server.url}/account`, scope, state: 's1',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', ...extra,
  }, username, `${username}-password`)
  return { location, verifier }
}

async function pageTokens(username: string, scope: string, extra: Record<string, string> = {}): Promise<TokenAnswer> {
  const { location, verifier } = await pageSignIn(username, scope, extra)
  const code = redirectParams(location).query.get('code')
  if (code === null) throw new Error(`no code in ${location}`)
  return tokenOk(env.issuer, { grant_type: 'authorization_code', code, client_id: CLIENT, redirect_uri: `${env.server.url}/account`, code_verifier: verifier })
}

t.test('identity first: no tenant, openid; /userinfo names the tenants', async (t) => {
  const tokens = await pageTokens('bob', 'openid profile email')
  t.equal(tokens.scope, 'openid profile email platform.no_tenant')
  t.equal(tokens.refresh_token, undefined, 'no refresh token: the page keeps nothing beyond its tab')
  t.type(tokens.id_token, 'string', 'an ID token, for the sign-out')
  const info = await call('GET', `${env.issuer}/tokeninfo?access_token=${tokens.access_token}`)
  t.match(info.json<Json>(), { tenant: null, client_id: CLIENT, client_authenticated: false, subject: 'u-bob' })
  const me = await call('GET', `${env.issuer}/userinfo`, bearer(tokens.access_token))
  t.same(me.json<Json>().tenants, ['acme', 'acme-eu', 'demo'])
  const graph = await call('GET', `${env.server.url}/graph/v1/demo/consents/cr_none`, bearer(tokens.access_token))
  t.equal(graph.status, 403, 'the identity token is no tenant\'s')
})

t.test('a token per tenant, without a prompt after the sign-in, with no service scope', async (t) => {
  for (const tenant of ['demo', 'acme']) {
    const tokens = await pageTokens('bob', `openid platform.tenant=${tenant} ${MANAGE}`, { prompt: 'none' })
    t.equal(tokens.scope, `openid platform.tenant=${tenant}`, `${tenant}: the tenant, no graph scope though bob's role there has it`)
  }
  const { location } = await pageSignIn('carol', 'openid platform.tenant=demo')
  const { query } = redirectParams(location)
  t.equal(query.get('error'), 'access_denied', 'a tenant the user is not a member of')
  t.match(query.get('error_description'), /not a member of tenant "demo"/)
})

t.test('a replayed code revokes the access token it gave (there is no refresh token to revoke)', async (t) => {
  const { location, verifier } = await pageSignIn('bob', 'openid platform.tenant=demo', { prompt: 'none' })
  const form = { grant_type: 'authorization_code', code: redirectParams(location).query.get('code')!, client_id: CLIENT, redirect_uri: `${env.server.url}/account`, code_verifier: verifier }
  const first = await tokenOk(env.issuer, form)
  const replay = await postForm(`${env.issuer}/token`, form)
  t.equal(replay.json<Json>().error, 'invalid_grant')
  t.equal((await call('GET', `${env.issuer}/userinfo`, bearer(first.access_token))).status, 401, 'the first exchange\'s token is revoked')
})

t.test('public: PKCE required, the page its only redirect URI', async (t) => {
  const ua = new UserAgent(env.issuer)
  const noPkce = await ua.send('GET', ua.authorizeUrl({ response_type: 'code', client_id: CLIENT, scope: 'openid' }))
  t.match(redirectParams(noPkce.headers.location as string).query.get('error_description'), /PKCE|code_challenge/)
  const elsewhere = await ua.send('GET', ua.authorizeUrl({ response_type: 'code', client_id: CLIENT, redirect_uri: 'http://127.0.0.1:1/account' }))
  t.equal(elsewhere.status, 400)
  const implicit = await ua.send('GET', ua.authorizeUrl({ response_type: 'token', client_id: CLIENT }))
  t.equal(redirectParams(implicit.headers.location as string).fragment.get('error'), 'unauthorized_client')
})

t.test('in the graph: its user\'s own consents only', async (t) => {
  const enricher = bearer(await getToken(env.server.url, MANAGE))
  const consent = async (subject: string): Promise<string> =>
    (await call('POST', `${env.server.url}/graph/v1/demo/consents`, { ...enricher, ...JSON_TYPE }, JSON.stringify({ subject }))).json<{ consentReference: string }>().consentReference
  const bobs = await consent('u-bob')
  const alices = await consent('alice')
  const demo = bearer((await pageTokens('bob', 'openid platform.tenant=demo', { prompt: 'none' })).access_token)
  const G = `${env.server.url}/graph/v1/demo`
  t.match((await call('GET', `${G}/consents/${bobs}`, demo)).json<Json>(), { consentReference: bobs, subject: 'u-bob', status: 'granted' })
  t.equal((await call('GET', `${G}/consents/${alices}`, demo)).status, 403, 'another subject\'s consent')
  t.equal((await call('DELETE', `${G}/consents/${alices}`, demo)).status, 403)
  t.equal((await call('GET', `${G}/nodes/core/customer`, demo)).status, 403, 'no graph read')
  t.equal((await call('POST', `${G}/consents`, { ...demo, ...JSON_TYPE }, JSON.stringify({ subject: 'u-bob' }))).status, 403, 'no consent made')
  t.equal((await call('GET', `${env.server.url}/graph/v1/acme/consents/${bobs}`, demo)).status, 403, 'another tenant')
  t.equal((await call('DELETE', `${G}/consents/${bobs}`, demo)).status, 204, 'its own consent taken back')
  t.equal((await call('GET', `${G}/consents/${alices}`, enricher)).json<Json>().status, 'granted', 'the other subject\'s untouched')
})

t.test('the admin API does not register, change or delete it', async (t) => {
  const admin = { ...bearer(await adminToken(env.issuer)), ...JSON_TYPE }
  const A = `${env.issuer}/admin/clients`
  const body = JSON.stringify({ client_id: CLIENT, tenant: 'demo', public: true, redirect_uris: ['https://x.example/cb'], scopes: [], grant_types: ['authorization_code'] })
  for (const [what, res] of [
    ['POST', await call('POST', A, admin, body)],
    ['PUT', await call('PUT', `${A}/${CLIENT}`, admin, JSON.stringify({ scopes: [MANAGE] }))],
    ['DELETE', await call('DELETE', `${A}/${CLIENT}`, admin)],
  ] as const) {
    t.equal(res.status, 400, what)
    t.match(res.json<Json>().message, /is built in/, what)
  }
  t.notOk((await call('GET', A, admin)).json<Json[]>().some((c) => c.client_id === CLIENT), 'not among the stored clients')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials', client_id: CLIENT })).status, 401, 'no client credentials for a public client')
})

t.test('GET /account: the page, under a CSP as strict as the sign-in page\'s plus its own script', async (t) => {
  const res = await call('GET', `${env.server.url}/account`)
  t.equal(res.status, 200)
  t.match(res.headers['content-type'], /^text\/html/)
  const csp = String(res.headers['content-security-policy'])
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1]
  t.ok(nonce, 'the script is allowed by a nonce')
  t.match(csp, /default-src 'none'/)
  t.match(csp, /connect-src 'self'/)
  t.match(csp, /require-trusted-types-for 'script'/)
  t.match(csp, /frame-ancestors 'none'/)
  t.match(csp, /base-uri 'none'/)
  t.match(csp, /form-action 'self'/)
  t.notMatch(csp, /unsafe|\*|https?:/, 'nothing inline without the nonce, no other origin')
  t.equal(res.headers['x-frame-options'], 'DENY')
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal([...res.text.matchAll(/<script nonce="([^"]+)">/g)].map((m) => m[1]).join(), nonce, 'one script, with that nonce')
  t.notMatch(res.text, /<script[^>]* src=/, 'no script from anywhere else')
  t.equal((await call('POST', `${env.server.url}/account`)).status, 404, 'GET only, as the other root routes')
})
