// Custom identity providers (OpenID Connect federation) against a real,
// independent OpenID provider (oidc-provider from npm, started here behind
// a proxy that can misbehave), driven without a browser: a cookie-keeping
// user agent follows the redirects and fills the upstream's pages. First
// sign-in provisions and links, the second reuses the link; linking by a
// verified e-mail; and a tampered ID token, a wrong nonce, a wrong issuer,
// a replayed state and an upstream access_denied are each refused.
import t, { type Test } from 'tap'
import { adminToken, call, oauthServerForFile, redirectParams, tokenOk, UserAgent, WEB_AUTH, type Json } from '../helpers/oauth'
import type { Answer } from '../helpers/client'
import { startUpstreamOp, type UpstreamOp } from '../helpers/upstream-op'
import { sleep, until } from '../../bench/wait'

const CLIENT_CALLBACK = 'http://127.0.0.1:65530/callback'
const UPSTREAM_SECRET = 'upstream-client-secret'
const env = oauthServerForFile(t)
let op: UpstreamOp
let admin: Record<string, string>

const providerUrl = (id: string): string => `${env.issuer}/admin/identity-providers/${id}`
const putProvider = (id: string, body: Json): Promise<Answer> =>
  call('PUT', providerUrl(id), { ...admin, 'content-type': 'application/json' }, JSON.stringify(body))

t.before(async () => {
  op = await startUpstreamOp(['upstream', 'by-email', 'other-iss'].map((id) => `${env.issuer}/idp/${id}/callback`), UPSTREAM_SECRET)
  admin = { authorization: `Bearer ${await adminToken(env.issuer)}` }
  const common = { client_id: 'platform', client_secret: UPSTREAM_SECRET, scopes: ['openid', 'email', 'profile'] }
  for (const [id, body] of [
    ['upstream', { ...common, issuer: op.issuer, provisioning: { tenants: { demo: ['graph-reader'] } } }],
    ['by-email', { ...common, issuer: op.issuer, link_by_verified_email: true }],
    ['other-iss', { ...common, issuer: op.otherIssuer, provisioning: { tenants: { demo: ['graph-reader'] } } }],
  ] as const) {
    const res = await putProvider(id, body)
    if (res.status !== 201) throw new Error(`PUT ${id}: ${res.status} ${res.text}`)
  }
})
t.teardown(() => op?.close())

const ABSOLUTE = (base: string, location: string): string => new URL(location, base).href

/**
 * /authorize with platform_id_provider, through the upstream's pages (sign
 * in as `login`, or abort), back to the client's redirect URI; returns
 * where the client was sent and the URL of our callback on the way.
 */
async function signInUpstream(
  ua: UserAgent, provider: string, login: string | 'abort', state = 'st', stopAtCallback = false,
): Promise<{ landed: string; callback: string }> {
  let url = ua.authorizeUrl({ client_id: 'web-app', response_type: 'code', scope: 'openid', state, redirect_uri: CLIENT_CALLBACK, platform_id_provider: provider })
  let callback = ''
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(`${env.issuer}/idp/`)) callback = url
    if (callback !== '' && stopAtCallback) return { landed: '', callback }
    const res = await ua.send('GET', url)
    if (res.status >= 300 && res.status < 400) {
      const next = ABSOLUTE(url, String(res.headers.location))
      if (next.startsWith(CLIENT_CALLBACK)) return { landed: next, callback }
      url = next
      continue
    }
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.text.slice(0, 300)}`)
    const action = ABSOLUTE(url, /<form[^>]*action="([^"]+)"/.exec(res.text)![1]!.replace(/&amp;/g, '&'))
    const prompt = /name="prompt" value="(\w+)"/.exec(res.text)![1]!
    if (prompt === 'login' && login === 'abort') {
      url = ABSOLUTE(url, /href="([^"]*\/abort)"/.exec(res.text)![1]!)
      continue
    }
    const form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any-password' } : { prompt })
    const posted = await ua.send('POST', action, form)
    if (posted.status !== 303 && posted.status !== 302) throw new Error(`${action}: ${posted.status} ${posted.text.slice(0, 300)}`)
    url = ABSOLUTE(action, String(posted.headers.location))
  }
  throw new Error('no end to the redirects')
}

async function codeAndSub(landed: string): Promise<{ sub: string; token: string }> {
  const { query } = redirectParams(landed)
  const code = query.get('code')
  if (code === null) throw new Error(`no code: ${landed}`)
  const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code, redirect_uri: CLIENT_CALLBACK }, WEB_AUTH)
  const claims = JSON.parse(Buffer.from(tokens.id_token!.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string; email: string }
  return { sub: claims.sub, token: tokens.access_token }
}

async function refused(t: Test, landed: string, error: string, description: RegExp): Promise<void> {
  const { query } = redirectParams(landed)
  t.equal(query.get('error'), error, `${error}: ${query.get('error_description')}`)
  t.match(query.get('error_description'), description)
  t.equal(query.get('code'), null)
}

t.test('the admin API shows a provider without its secret, with the redirect URI to register upstream', async (t) => {
  const one = await call('GET', providerUrl('upstream'), admin)
  t.equal(one.status, 200)
  const body = one.json<Json>()
  t.same(body, {
    id: 'upstream', issuer: op.issuer, client_id: 'platform', scopes: ['openid', 'email', 'profile'],
    claims: { username: 'preferred_username', email: 'email' }, provisioning: { tenants: { demo: ['graph-reader'] } },
    client_secret_set: true, redirect_uri: `${env.issuer}/idp/upstream/callback`,
  })
  t.notMatch(one.text, UPSTREAM_SECRET)
  const list = await call('GET', `${env.issuer}/admin/identity-providers`, admin)
  t.same(list.json<Json[]>().map((p) => p.id).sort(), ['by-email', 'other-iss', 'upstream'])
  t.equal((await call('GET', `${env.issuer}/admin/identity-providers`)).status, 401, 'needs the admin token')

  const noRule = await putProvider('bad', { issuer: op.issuer, client_id: 'x' })
  t.equal(noRule.status, 400)
  t.match(noRule.json<Json>().message, /provisioning .* or link_by_verified_email/)
  const noTenant = await putProvider('bad', { issuer: op.issuer, client_id: 'x', provisioning: { tenants: { nowhere: [] } } })
  t.match(noTenant.json<Json>().message, /tenant "nowhere" does not exist/)
  const badIssuer = await putProvider('bad', { issuer: 'ftp://x', client_id: 'x', link_by_verified_email: true })
  t.match(badIssuer.json<Json>().message, /must be an http or https URL/)
  t.equal((await call('GET', providerUrl('bad'), admin)).status, 404)

  // An update without client_secret keeps the sealed one (the sign-ins below use it); null makes the client public.
  const kept = await putProvider('upstream', { issuer: op.issuer, client_id: 'platform', provisioning: { tenants: { demo: ['graph-reader'] } } })
  t.equal(kept.status, 200)
  t.equal(kept.json<Json>().client_secret_set, true)
  const pub = await putProvider('public', { issuer: op.issuer, client_id: 'spa', client_secret: null, link_by_verified_email: true })
  t.equal(pub.json<Json>().client_secret_set, false)
  t.equal((await call('DELETE', providerUrl('public'), admin)).status, 204)
  t.equal((await call('GET', providerUrl('public'), admin)).status, 404)
})

t.test('first sign-in provisions a user and links it; the second reuses the link', async (t) => {
  const first = await signInUpstream(new UserAgent(env.issuer), 'upstream', 'dan')
  t.equal(redirectParams(first.landed).query.get('state'), 'st')
  const one = await codeAndSub(first.landed)
  const user = await call('GET', `${env.issuer}/admin/users/${one.sub}`, admin)
  t.equal(user.status, 200)
  t.same(user.json<Json>(), { id: one.sub, username: 'dan', email: 'dan@upstream.example', email_verified: true, tenants: { demo: ['graph-reader'] } }, 'the upstream verified the e-mail')
  const info = await call('GET', `${env.issuer}/tokeninfo?access_token=${one.token}`)
  t.equal(info.json<Json>().tenant, 'demo', 'the client tenant rules apply as after a local sign-in')

  const agent = new UserAgent(env.issuer)
  const second = await codeAndSub((await signInUpstream(agent, 'upstream', 'dan', 'again')).landed)
  t.equal(second.sub, one.sub, 'the same local user')
  const users = (await call('GET', `${env.issuer}/admin/users`, admin)).json<Json[]>()
  t.equal(users.filter((u) => u.username === 'dan').length, 1, 'no second user')

  // The session is ours: the next authorization of this browser needs no upstream.
  const sso = await agent.send('GET', agent.authorizeUrl({ client_id: 'web-app', response_type: 'code', scope: 'openid', state: 'sso', redirect_uri: CLIENT_CALLBACK }))
  t.equal(sso.status, 302)
  t.equal((await codeAndSub(String(sso.headers.location))).sub, one.sub)
})

t.test('a provider that links by verified e-mail finds the one user with it, and only then', async (t) => {
  const created = await call('POST', `${env.issuer}/admin/users`, { ...admin, 'content-type': 'application/json' },
    JSON.stringify({ username: 'carol-local', password: 'carol-password', email: 'carol@upstream.example', tenants: { demo: ['graph-reader'] } }))
  t.equal(created.status, 201)
  const linked = await codeAndSub((await signInUpstream(new UserAgent(env.issuer), 'by-email', 'carol')).landed)
  t.equal(linked.sub, 'carol-local')
  await refused(t, (await signInUpstream(new UserAgent(env.issuer), 'by-email', 'stranger')).landed, 'access_denied', /no user of this server has the e-mail/)
  await refused(t, (await signInUpstream(new UserAgent(env.issuer), 'by-email', 'unverified-carol')).landed, 'access_denied', /did not send an e-mail it verified/)
})

t.test('a new upstream user whose username a local user has is refused, not merged', async (t) => {
  await refused(t, (await signInUpstream(new UserAgent(env.issuer), 'upstream', 'bob')).landed, 'access_denied', /the username "bob" .* belongs to another user/)
})

t.test('a tampered ID token is refused', async (t) => {
  op.misbehave = 'tamper-id-token'
  t.teardown(() => { op.misbehave = 'none' })
  await refused(t, (await signInUpstream(new UserAgent(env.issuer), 'upstream', 'mallory')).landed, 'access_denied', /ID token .* is not valid: signature verification failed/)
})

t.test('an ID token with another nonce is refused', async (t) => {
  op.misbehave = 'other-nonce'
  t.teardown(() => { op.misbehave = 'none' })
  await refused(t, (await signInUpstream(new UserAgent(env.issuer), 'upstream', 'mallory')).landed, 'access_denied', /another nonce/)
})

t.test('an ID token of another issuer than the configured one is refused', async (t) => {
  await refused(t, (await signInUpstream(new UserAgent(env.issuer), 'other-iss', 'mallory')).landed, 'access_denied', /not valid: unexpected "iss" claim value/)
})

t.test('the upstream answering access_denied reaches the client as access_denied', async (t) => {
  await refused(t, (await signInUpstream(new UserAgent(env.issuer), 'upstream', 'abort')).landed, 'access_denied', /identity provider "upstream" answered access_denied/)
})

t.test('a replayed state is refused', async (t) => {
  const ua = new UserAgent(env.issuer)
  const { callback } = await signInUpstream(ua, 'upstream', 'dan')
  const replay = await ua.send('GET', callback)
  t.equal(replay.status, 400)
  t.match(replay.text, /unknown, expired or already finished/)
  const forged = await ua.send('GET', `${env.issuer}/idp/upstream/callback?state=made-up&code=x`)
  t.equal(forged.status, 400)
})

t.test('the callback finishes only in the browser that started the sign-in (login CSRF)', async (t) => {
  const attacker = new UserAgent(env.issuer)
  const { callback } = await signInUpstream(attacker, 'upstream', 'dan', 'csrf', true)
  t.ok(attacker.cookies.has('platform_upstream'), 'the binding cookie was set')
  const victim = new UserAgent(env.issuer)
  const res = await victim.send('GET', callback)
  t.equal(res.status, 400)
  t.match(res.text, /started in another browser/)
  t.notOk(victim.cookies.has('platform_session'), 'the victim is not signed in as the attacker')
})

t.test('deleting a local user ends its link: the next upstream sign-in provisions a new user', async (t) => {
  const before = await codeAndSub((await signInUpstream(new UserAgent(env.issuer), 'upstream', 'frank')).landed)
  t.equal((await call('DELETE', `${env.issuer}/admin/users/${before.sub}`, admin)).status, 204)
  const after = await codeAndSub((await signInUpstream(new UserAgent(env.issuer), 'upstream', 'frank')).landed)
  t.not(after.sub, before.sub)
  t.equal((await call('GET', `${env.issuer}/admin/users/${after.sub}`, admin)).json<Json>().username, 'frank')
})

t.test('nobody was provisioned by the refused sign-ins', async (t) => {
  const users = (await call('GET', `${env.issuer}/admin/users`, admin)).json<Json[]>()
  t.same(users.filter((u) => /mallory|stranger/.test(String(u.username))), [])
})

/** The client's error_description names what failed, never an address, port or socket error; the log has them. */
async function notMapped(t: Test, description: string | null, logged: RegExp): Promise<void> {
  t.notMatch(description, /127\.0\.0\.1|localhost|:\d{2,5}|ECONN|UND_ERR|socket|timeout|https?:/i, 'no address or socket error for the client')
  await until(`the log line ${String(logged)}`, () => logged.test(env.server.output()))
  t.pass('the detail is in the log')
}

t.test('an upstream that cannot be reached is a server_error at the client, never a 500', async (t) => {
  t.equal((await putProvider('gone', { issuer: 'http://127.0.0.1:1', client_id: 'x', link_by_verified_email: true })).status, 201)
  const ua = new UserAgent(env.issuer)
  const res = await ua.send('GET', ua.authorizeUrl({ client_id: 'web-app', response_type: 'code', scope: 'openid', state: 's', redirect_uri: CLIENT_CALLBACK, platform_id_provider: 'gone' }))
  t.equal(res.status, 302)
  const location = String(res.headers.location)
  await refused(t, location, 'server_error', /^identity provider "gone" is not available: its discovery document could not be reached$/)
  await notMapped(t, redirectParams(location).query.get('error_description'), /identity provider \\"gone\\" is not available: http:\/\/127\.0\.0\.1:1\/\.well-known\/openid-configuration could not be reached: ECONNREFUSED/)
  t.equal((await call('DELETE', providerUrl('gone'), admin)).status, 204)
})

t.test('a failing token endpoint (HTML answer, reset, no answer) is a server_error naming the provider, not the URL', async (t) => {
  const cases = [
    ['token-html', /its token endpoint answered with an error$/, /token answered 502 without a JSON body/],
    ['token-reset', /its token endpoint could not be reached$/, /token could not be reached: (ECONNRESET|UND_ERR_SOCKET)/],
    // the wait is the upstream time limit (10 s)
    ['token-hang', /its token endpoint could not be reached$/, /token could not be reached: UND_ERR_HEADERS_TIMEOUT/],
  ] as const
  for (const [misbehaviour, said, logged] of cases) {
    op.misbehave = misbehaviour
    const { landed } = await signInUpstream(new UserAgent(env.issuer), 'upstream', 'dan', misbehaviour)
    op.misbehave = 'none'
    const description = redirectParams(landed).query.get('error_description')
    await refused(t, landed, 'server_error', /^identity provider "upstream" failed: /)
    t.match(description, said, misbehaviour)
    await notMapped(t, description, logged)
  }
})

t.test('federated sign-ins leave audit lines naming the provider, success and refusal alike', async (t) => {
  // The log is written in batches (at most 200 ms apart).
  let audits: Json[] = []
  for (let i = 0; i < 40 && !(audits.some((a) => a.audit === 'sign_in.success') && audits.some((a) => a.audit === 'sign_in.failure')); i++) {
    await sleep(100)
    audits = env.server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Json).filter((l) => typeof l.audit === 'string' && String(l.audit).startsWith('sign_in.'))
  }
  const success = audits.find((a) => a.audit === 'sign_in.success' && a.provider !== undefined)
  t.ok(success, 'a success line')
  t.equal(success?.client, 'web-app')
  t.type(success?.subject, 'string')
  t.ok(audits.some((a) => a.audit === 'sign_in.failure' && typeof a.provider === 'string' && typeof a.reason === 'string'), 'a refusal line with its reason')
})
