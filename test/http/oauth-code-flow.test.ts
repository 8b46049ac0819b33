// The authorization code flow end to end over HTTP: sign-in page, code,
// exchange, PKCE, single use, redirect URI rules, errors by redirect or bad
// request, tenant selection, identity providers, sessions.
import t from 'tap'
import { createHash } from 'node:crypto'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import {
  basic, WEB_AUTH, call, codeFor, hiddenFields, MANAGE, oauthServerForFile, postForm, redirectParams, tokenOk, UserAgent, VIEW, type Json,
} from '../helpers/oauth'

const env = oauthServerForFile(t)

const WEB = { client_id: 'web-app' }
const CALLBACK = 'http://127.0.0.1:65530/callback'
const verifier = 'v'.repeat(20) + 'erifier-of-forty-three-chars-at-least'
const s256 = (v: string): string => createHash('sha256').update(v).digest('base64url')

t.test('code flow: sign-in page, code in the query with state and iss, exchange with refresh and ID tokens', async (t) => {
  const ua = new UserAgent(env.issuer)
  const page = await ua.open({ ...WEB, response_type: 'code', scope: 'openid', state: 'st-1', nonce: 'n-1' })
  t.equal(page.status, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.text, /<form method="post" action="[^"]+\/oauth2\/v1\/authorize">/)
  t.match(page.text, /name="csrf"/)
  t.notMatch(page.text, /<script|<link|src=/, 'no scripts or external assets')
  t.match(page.headers['content-security-policy'], /default-src 'none'/)
  t.match(page.headers['content-security-policy'], /frame-ancestors 'none'/)
  // browsers would check form-action at every redirect after the POST, to wherever the client sends on
  t.notMatch(page.headers['content-security-policy'], /form-action/)
  t.equal(page.headers['x-frame-options'], 'DENY')
  t.equal(page.headers['cache-control'], 'no-store')
  t.match(String(page.headers['set-cookie']), /platform_csrf=.*HttpOnly; SameSite=Strict/)

  const signedIn = await ua.submit(page, 'alice', 'alice-password')
  t.equal(signedIn.status, 303)
  const cookies = ([] as string[]).concat(signedIn.headers['set-cookie'] as string | string[])
  t.ok(cookies.some((c) => /^platform_session=[A-Za-z0-9_-]{43}; Path=\/oauth2\/v1; Max-Age=\d+; HttpOnly; SameSite=Lax$/.test(c)), 'HttpOnly SameSite session cookie')
  const { base, query, fragment } = redirectParams(signedIn.headers.location as string)
  t.equal(base, CALLBACK)
  t.equal(query.get('state'), 'st-1')
  t.equal(query.get('iss'), env.issuer)
  t.match(query.get('code'), /^[A-Za-z0-9_-]{43}$/)
  t.equal([...fragment].length, 0)

  const res = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code: query.get('code')!, redirect_uri: CALLBACK }, WEB_AUTH)
  t.equal(res.status, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json<Json>()
  t.same(Object.keys(body).sort(), ['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'])
  t.equal(body.token_type, 'Bearer')
  t.equal(body.expires_in, 3600)
  t.same((body.scope as string).split(' ').sort(), [MANAGE, VIEW, 'openid', 'platform.tenant=demo'].sort())
  const { payload, protectedHeader } = await jwtVerify(body.id_token as string, createRemoteJWKSet(new URL(`${env.issuer}/.well-known/jwks.json`)), {
    issuer: env.issuer, audience: 'web-app', algorithms: ['RS256'],
  })
  t.equal(protectedHeader.alg, 'RS256')
  t.equal(protectedHeader.typ, 'JWT')
  t.type(protectedHeader.kid, 'string')
  t.equal(payload.sub, 'alice')
  t.equal(payload.aud, 'web-app', 'one audience')
  t.equal(payload.email, 'alice@example.com')
  t.equal(payload.nonce, 'n-1')
  t.equal((payload.exp as number) - (payload.iat as number), 3600)
  t.equal(payload.at_hash, createHash('sha256').update(body.access_token as string).digest().subarray(0, 16).toString('base64url'))

  // The token works on the graph for the user's tenant.
  const graph = await call('GET', `${env.server.url}/graph/v1/demo/nodes/core/customer/nobody`, { authorization: `Bearer ${body.access_token as string}` })
  t.not(graph.status, 401)
  t.not(graph.status, 403)

  // Single sign-on: the session cookie gives the next code without a form.
  const again = await ua.open({ ...WEB, response_type: 'code', state: 'st-2' })
  t.equal(again.status, 302)
  t.equal(redirectParams(again.headers.location as string).query.get('state'), 'st-2')
})

t.test('without openid there is no ID token; the code is still exchanged for a refresh token', async (t) => {
  const { code } = await codeFor(env.issuer, { ...WEB, scope: VIEW }, 'alice', 'alice-password')
  const body = await tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.equal(body.id_token, undefined)
  t.type(body.refresh_token, 'string')
  t.equal(body.scope, `${VIEW} platform.tenant=demo`)
})

t.test('a code is single-use: the replay fails and revokes what the first exchange gave', async (t) => {
  const { code } = await codeFor(env.issuer, WEB, 'alice', 'alice-password')
  const first = await tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
  const replay = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.equal(replay.status, 400)
  t.equal(replay.json<Json>().error, 'invalid_grant')
  const info = await call('GET', `${env.issuer}/tokeninfo?access_token=${first.access_token}`)
  t.equal(info.status, 401, 'the access token of the first exchange is revoked')
  const refresh = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token! }, WEB_AUTH)
  t.equal(refresh.status, 400, 'and its refresh token')
})

t.test('concurrent exchanges of one code: exactly one wins', async (t) => {
  const { code } = await codeFor(env.issuer, WEB, 'alice', 'alice-password')
  const answers = await Promise.all([1, 2, 3, 4].map(() => postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code }, WEB_AUTH)))
  t.equal(answers.filter((a) => a.status === 200).length, 1)
})

t.test('a code expires after a short life', async (t) => {
  const { code } = await codeFor(env.issuer, WEB, 'alice', 'alice-password')
  env.server.setClockOffset(61_000)
  t.teardown(() => env.server.setClockOffset(0))
  const res = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.equal(res.status, 400)
  t.equal(res.json<Json>().error, 'invalid_grant')
})

t.test('a code is bound to its client', async (t) => {
  const { code } = await codeFor(env.issuer, WEB, 'alice', 'alice-password')
  const res = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code }, { authorization: basic('other-app', 'other-secret') })
  t.equal(res.status, 400)
  t.match(res.json<Json>(), { error: 'invalid_grant', error_description: /another client/ })
  const wrongSecret = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code }, { authorization: basic('web-app', 'nope') })
  t.equal(wrongSecret.status, 401)
  t.equal(wrongSecret.json<Json>().error, 'invalid_client')
  const noAuth = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code, client_id: 'web-app' })
  t.equal(noAuth.status, 401, 'a confidential client must authenticate')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code }, WEB_AUTH)).status, 200, 'failed attempts did not use the code')
})

t.test('a code is bound to the redirect URI of its request', async (t) => {
  const { code } = await codeFor(env.issuer, { ...WEB, redirect_uri: CALLBACK }, 'alice', 'alice-password')
  const missing = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.match(missing.json<Json>(), { error: 'invalid_grant', error_description: /redirect_uri is required/ })
  const other = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code, redirect_uri: `${CALLBACK}/x` }, WEB_AUTH)
  t.match(other.json<Json>(), { error: 'invalid_grant', error_description: /redirect_uri differs/ })
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, WEB_AUTH)).status, 200)
})

t.test('PKCE S256 and plain', async (t) => {
  const s = await codeFor(env.issuer, { ...WEB, code_challenge: s256(verifier), code_challenge_method: 'S256' }, 'alice', 'alice-password')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code: s.code, code_verifier: verifier }, WEB_AUTH)).status, 200)
  const p = await codeFor(env.issuer, { ...WEB, code_challenge: verifier }, 'alice', 'alice-password')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code: p.code, code_verifier: verifier }, WEB_AUTH)).status, 200, 'plain is the default method')
})

t.test('PKCE failures', async (t) => {
  const { code } = await codeFor(env.issuer, { ...WEB, code_challenge: s256(verifier), code_challenge_method: 'S256' }, 'alice', 'alice-password')
  for (const [what, form] of [
    ['no verifier', {}],
    ['wrong verifier', { code_verifier: `${verifier}x` }],
    ['the challenge itself as verifier', { code_verifier: s256(verifier) }],
    ['too short', { code_verifier: 'short' }],
  ] as [string, Record<string, string>][]) {
    const res = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code, ...form }, WEB_AUTH)
    t.equal(res.status, 400, what)
    t.equal(res.json<Json>().error, 'invalid_grant', what)
  }
  const plain = await codeFor(env.issuer, { ...WEB }, 'alice', 'alice-password')
  const downgrade = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code: plain.code, code_verifier: verifier }, WEB_AUTH)
  t.match(downgrade.json<Json>(), { error: 'invalid_grant', error_description: /no code_challenge/ }, 'a verifier without a challenge is refused')

  const ua = new UserAgent(env.issuer)
  for (const [what, params, pattern] of [
    ['unknown method', { code_challenge: verifier, code_challenge_method: 'S512' }, /not supported/],
    ['method without challenge', { code_challenge_method: 'S256' }, /without code_challenge/],
    ['malformed S256 challenge', { code_challenge: 'abc', code_challenge_method: 'S256' }, /43 characters/],
    ['public client without PKCE', { client_id: 'spa' }, /PKCE is required/],
  ] as [string, Record<string, string>, RegExp][]) {
    const res = await ua.open({ ...WEB, response_type: 'code', state: 's', ...params })
    t.equal(res.status, 302, what)
    const { query, fragment } = redirectParams(res.headers.location as string)
    t.equal(query.get('error'), 'invalid_request', what)
    t.match(query.get('error_description'), pattern, what)
    t.equal(fragment.get('error'), 'invalid_request', `${what}: also in the fragment`)
    t.equal(fragment.get('state'), 's')
  }
})

t.test('a public client: PKCE and client_id alone', async (t) => {
  const { code } = await codeFor(env.issuer, { client_id: 'spa', code_challenge: s256(verifier), code_challenge_method: 'S256' }, 'alice', 'alice-password')
  const body = await tokenOk(env.issuer, { grant_type: 'authorization_code', code, client_id: 'spa', code_verifier: verifier })
  t.type(body.refresh_token, 'string')
  const refreshed = await tokenOk(env.issuer, { grant_type: 'refresh_token', refresh_token: body.refresh_token!, client_id: 'spa' })
  t.type(refreshed.access_token, 'string')
})

t.test('redirect URIs: exact match, mandatory with several, never an open redirect', async (t) => {
  const ua = new UserAgent(env.issuer)
  for (const [what, params] of [
    ['unregistered', { ...WEB, redirect_uri: 'https://evil.example/callback' }],
    ['prefix of a registered one', { ...WEB, redirect_uri: 'http://127.0.0.1:65530/call' }],
    ['registered one plus a path', { ...WEB, redirect_uri: `${CALLBACK}/more` }],
    ['registered one plus a query', { ...WEB, redirect_uri: `${CALLBACK}?x=1` }],
    ['case changed', { ...WEB, redirect_uri: 'HTTP://127.0.0.1:65530/callback' }],
    ['missing with several registered', { client_id: 'two-uris' }],
    ['unknown client', { client_id: 'nobody', redirect_uri: CALLBACK }],
    ['no client', { redirect_uri: CALLBACK }],
    ['client_id twice', { client_id: 'web-app', redirect_uri: CALLBACK, extra: '' }],
  ] as [string, Record<string, string>][]) {
    const res = await ua.send('GET', ua.authorizeUrl({ response_type: 'code', ...params }).replace('&extra=', '&client_id=web-app'), undefined, { accept: 'application/json' })
    t.equal(res.status, 400, what)
    t.equal(res.headers.location, undefined, `${what}: no redirect`)
    t.match(res.json<Json>(), { status: 400, type: 'bad_request', error: 'invalid_request' }, what)
  }
  const html = await ua.open({ ...WEB, response_type: 'code', redirect_uri: 'https://evil.example/' })
  t.equal(html.status, 400)
  t.match(html.headers['content-type'], /text\/html/, 'a browser gets an error page')
  t.match(html.text, /not registered/)

  const two = await codeFor(env.issuer, { client_id: 'two-uris', redirect_uri: 'http://127.0.0.1:65530/two?keep=1' }, 'alice', 'alice-password')
  const { base, query } = redirectParams(two.location)
  t.equal(base, 'http://127.0.0.1:65530/two', 'the registered query is kept')
  t.equal(query.get('keep'), '1')
  t.type(query.get('code'), 'string')
})

t.test('errors after the redirect URI is trusted go back to it (query and fragment for the code flow)', async (t) => {
  const ua = new UserAgent(env.issuer)
  for (const [what, params, error] of [
    ['unknown response_type', { response_type: 'magic' }, 'unsupported_response_type'],
    ['no response_type', { response_type: '' }, 'invalid_request'],
    ['grant not allowed for the client', { response_type: 'token' }, 'unauthorized_client'],
    ['platform.org in the code flow', { response_type: 'code', scope: 'platform.org=demo-org' }, 'invalid_scope'],
    ['two tenant scopes', { response_type: 'code', scope: 'platform.tenant=demo platform.tenant=acme' }, 'invalid_scope'],
    ['unknown identity provider', { response_type: 'code', platform_id_provider: 'idp_github' }, 'invalid_request'],
    ['prompt=none without a session', { response_type: 'code', prompt: 'none' }, 'login_required'],
    ['a parameter twice', { response_type: 'code', scope: VIEW, dup: '' }, 'invalid_request'],
    ['a request object', { response_type: 'code', request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported'],
    ['a request_uri', { response_type: 'code', request_uri: 'https://client.example/req.jwt' }, 'request_uri_not_supported'],
  ] as [string, Record<string, string>, string][]) {
    const res = await ua.send('GET', ua.authorizeUrl({ ...WEB, state: 'xyz', ...params }).replace('&dup=', `&scope=${VIEW}`))
    t.equal(res.status, 302, what)
    const { base, query, fragment } = redirectParams(res.headers.location as string)
    t.equal(base, CALLBACK, what)
    const where = params.response_type === 'code' ? query : fragment
    t.equal(where.get('error'), error, what)
    t.type(where.get('error_description'), 'string', what)
    t.equal(where.get('state'), 'xyz', `${what}: state echoed`)
    t.equal(fragment.get('error'), error, `${what}: in the fragment`)
  }
  const provider = await ua.open({ ...WEB, response_type: 'code', platform_id_provider: 'idp_github' })
  t.match(redirectParams(provider.headers.location as string).query.get('error_description'), /unknown identity provider.*idp_github.*idp_default and idp_legacy/)
})

t.test('tenant selection of the code flow: the client tenant, the user must be a member', async (t) => {
  const carol = new UserAgent(env.issuer)
  const location = await carol.authorize({ ...WEB, response_type: 'code', state: 'c' }, 'carol', 'carol-password')
  const { query } = redirectParams(location)
  t.equal(query.get('error'), 'access_denied')
  t.match(query.get('error_description'), /not a member of tenant "demo"/)

  // bob: reader in demo, writer in acme (acme subscribes to the demo package).
  const demo = await codeFor(env.issuer, WEB, 'bob', 'bob-password')
  t.equal((await tokenOk(env.issuer, { grant_type: 'authorization_code', code: demo.code }, WEB_AUTH)).scope, `${VIEW} platform.tenant=demo`, 'roles limit the scopes')
  const acme = await codeFor(env.issuer, { ...WEB, scope: 'platform.tenant=acme' }, 'bob', 'bob-password')
  t.same((await tokenOk(env.issuer, { grant_type: 'authorization_code', code: acme.code }, WEB_AUTH)).scope.split(' ').sort(), [MANAGE, VIEW, 'platform.tenant=acme'].sort())
  const eu = await codeFor(env.issuer, { ...WEB, scope: `platform.tenant=acme-eu ${MANAGE} ${VIEW}` }, 'bob', 'bob-password')
  t.equal((await tokenOk(env.issuer, { grant_type: 'authorization_code', code: eu.code }, WEB_AUTH)).scope, `${VIEW} platform.tenant=acme-eu`, 'the subscription limits the scopes')
  const noTenant = await codeFor(env.issuer, { ...WEB, scope: 'platform.no_tenant' }, 'alice', 'alice-password')
  t.match((await tokenOk(env.issuer, { grant_type: 'authorization_code', code: noTenant.code }, WEB_AUTH)).scope, /platform\.tenant=demo$/, 'platform.no_tenant means the client tenant')
  const globex = await new UserAgent(env.issuer).authorize({ ...WEB, response_type: 'code', scope: 'platform.tenant=globex' }, 'bob', 'bob-password')
  t.equal(redirectParams(globex).query.get('error'), 'access_denied', 'a tenant the user is not in')
})

t.test('the scope at the exchange only narrows', async (t) => {
  const { code } = await codeFor(env.issuer, { ...WEB, scope: `${VIEW} ${MANAGE}` }, 'alice', 'alice-password')
  const body = await tokenOk(env.issuer, { grant_type: 'authorization_code', code, scope: `${VIEW} platform.admin` }, WEB_AUTH)
  t.equal(body.scope, `${VIEW} platform.tenant=demo`)
})

t.test('the sign-in form: wrong password, CSRF, display, identity providers', async (t) => {
  const ua = new UserAgent(env.issuer)
  const page = await ua.open({ ...WEB, response_type: 'code' })
  const wrong = await ua.submit(page, 'alice', 'not-her-password')
  t.equal(wrong.status, 401)
  t.match(wrong.text, /Invalid username or password/)
  t.match(wrong.text, /value="alice"/, 'the username is kept')

  const noCsrf = await ua.submit(page, 'alice', 'alice-password', { csrf: 'x'.repeat(43) })
  t.equal(noCsrf.status, 403, 'a CSRF token that is not the cookie is refused')
  const stranger = new UserAgent(env.issuer)
  const forged = await stranger.submit(page, 'alice', 'alice-password')
  t.equal(forged.status, 403, 'a post without the CSRF cookie is refused')
  const otherOrigin = await ua.send('POST', `${env.issuer}/authorize`,
    new URLSearchParams({ client_id: 'web-app', response_type: 'code', username: 'alice', password: 'alice-password', csrf: ua.cookies.get('platform_csrf')! }),
    { origin: 'https://evil.example' })
  t.equal(otherOrigin.status, 403, 'another Origin is refused')

  const popupLegacy = await new UserAgent(env.issuer).open({ ...WEB, response_type: 'code', platform_id_provider: 'idp_legacy', display: 'popup' })
  t.match(popupLegacy.text, /<body class="popup">/)
  t.match(popupLegacy.text, /legacy identity provider/)
  const popupDefault = await new UserAgent(env.issuer).open({ ...WEB, response_type: 'code', display: 'popup' })
  t.match(popupDefault.text, /<body class="page">/, 'idp_default falls back to page')
  const legacy = await codeFor(env.issuer, { ...WEB, platform_id_provider: 'idp_legacy' }, 'alice', 'alice-password')
  t.type(legacy.code, 'string', 'idp_legacy signs in the same users')

  const hidden = await new UserAgent(env.issuer).open({ ...WEB, response_type: 'code', state: '"><script>alert(1)</script>' })
  t.notMatch(hidden.text, /<script>/, 'parameters are escaped in the page')
})

t.test('prompt=login asks again; max_age=0 too', async (t) => {
  const ua = new UserAgent(env.issuer)
  await ua.authorize({ ...WEB, response_type: 'code' }, 'alice', 'alice-password')
  t.equal((await ua.open({ ...WEB, response_type: 'code' })).status, 302)
  t.equal((await ua.open({ ...WEB, response_type: 'code', prompt: 'login' })).status, 200)
  t.equal((await ua.open({ ...WEB, response_type: 'code', max_age: '0' })).status, 200)
  t.equal((await ua.open({ ...WEB, response_type: 'code', prompt: 'none' })).status, 302)
})

t.test('prompt=select_account shows the sign-in form even with a session', async (t) => {
  const ua = new UserAgent(env.issuer)
  await ua.authorize({ ...WEB, response_type: 'code' }, 'alice', 'alice-password')
  const page = await ua.open({ ...WEB, response_type: 'code', prompt: 'select_account' })
  t.equal(page.status, 200)
  t.match(page.text, /name="username"/)
  const res = await ua.submit(page, 'bob', 'bob-password')
  t.type(redirectParams(res.headers.location as string).query.get('code'), 'string', 'another account signs in')
})

t.test('prompt=consent: the user allows or denies the grant on a page, before any code is issued', async (t) => {
  const ua = new UserAgent(env.issuer)
  await ua.authorize({ ...WEB, response_type: 'code' }, 'alice', 'alice-password')
  const params = { ...WEB, response_type: 'code', prompt: 'consent', scope: `openid ${VIEW}`, state: 'c1' }
  const page = await ua.open(params)
  t.equal(page.status, 200, 'a page, not a redirect, although signed in')
  t.match(page.text, /Allow access\?/)
  t.match(page.text, /<li>platform\.profile_graph_view<\/li>/)
  t.match(page.text, /<li>platform\.tenant=demo<\/li>/)
  t.notMatch(page.text, /name="username"/)
  const hidden = hiddenFields(page.text)
  const origin = { origin: new URL(env.issuer).origin }

  const forged = await ua.send('POST', `${env.issuer}/authorize`, new URLSearchParams({ ...hidden, csrf: 'x'.repeat(43), consent: 'allow' }), origin)
  t.equal(forged.status, 403, 'the CSRF token is checked')

  const denied = await ua.send('POST', `${env.issuer}/authorize`, new URLSearchParams({ ...hidden, consent: 'deny' }), origin)
  t.equal(denied.status, 303)
  t.equal(redirectParams(denied.headers.location as string).query.get('error'), 'access_denied')
  t.equal(redirectParams(denied.headers.location as string).query.get('state'), 'c1')

  const allowed = await ua.send('POST', `${env.issuer}/authorize`, new URLSearchParams({ ...hidden, consent: 'allow' }), origin)
  t.equal(allowed.status, 303)
  const code = redirectParams(allowed.headers.location as string).query.get('code')!
  const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.match(tokens.scope, /platform\.profile_graph_view/)

  // Not signed in: the sign-in form first, then the consent page.
  const fresh = new UserAgent(env.issuer)
  const signIn = await fresh.open(params)
  t.match(signIn.text, /name="username"/)
  const consent = await fresh.submit(signIn, 'alice', 'alice-password')
  t.equal(consent.status, 200)
  t.match(consent.text, /Allow access\?/)
  const hidden2 = hiddenFields(consent.text)
  const after = await fresh.send('POST', `${env.issuer}/authorize`, new URLSearchParams({ ...hidden2, consent: 'allow' }), origin)
  t.equal(after.status, 303)
  t.type(redirectParams(after.headers.location as string).query.get('code'), 'string')
})

t.test('platform-session-id: the client value wins over the gateway header, else one is generated', async (t) => {
  const ua = new UserAgent(env.issuer)
  const page = await ua.open({ ...WEB, response_type: 'code', 'platform-session-id': 'from-client' })
  const res = await ua.submit(page, 'alice', 'alice-password')
  const code = redirectParams(res.headers.location as string).query.get('code')!
  const token = await tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
  const info = (await call('GET', `${env.issuer}/tokeninfo?access_token=${token.access_token}`)).json<Json>()
  t.equal(info['platform-session-id'], 'from-client')

  const viaHeader = await ua.send('GET', ua.authorizeUrl({ ...WEB, response_type: 'code' }), undefined, { 'platform-session-id': 'from-gateway' })
  const code2 = redirectParams(viaHeader.headers.location as string).query.get('code')!
  const token2 = await tokenOk(env.issuer, { grant_type: 'authorization_code', code: code2 }, WEB_AUTH)
  t.equal((await call('GET', `${env.issuer}/tokeninfo?access_token=${token2.access_token}`)).json<Json>()['platform-session-id'], 'from-gateway')

  const both = await ua.send('GET', ua.authorizeUrl({ ...WEB, response_type: 'code', 'platform-session-id': 'client-wins' }), undefined, { 'platform-session-id': 'gateway' })
  const code3 = redirectParams(both.headers.location as string).query.get('code')!
  const token3 = await tokenOk(env.issuer, { grant_type: 'authorization_code', code: code3 }, WEB_AUTH)
  t.equal((await call('GET', `${env.issuer}/tokeninfo?access_token=${token3.access_token}`)).json<Json>()['platform-session-id'], 'client-wins')

  const generated = await codeFor(env.issuer, WEB, 'alice', 'alice-password')
  const token4 = await tokenOk(env.issuer, { grant_type: 'authorization_code', code: generated.code }, WEB_AUTH)
  t.match((await call('GET', `${env.issuer}/tokeninfo?access_token=${token4.access_token}`)).json<Json>()['platform-session-id'], /^[0-9a-f-]{36}$/)
})
