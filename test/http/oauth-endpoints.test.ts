// Discovery, /tokeninfo, /userinfo (GET and POST), /refreshtokens (GET and
// DELETE with the client filter) and /end_session over HTTP.
import t from 'tap'
import { jwtVerify, createRemoteJWKSet } from 'jose'
import {
  basic, WEB_AUTH, call, codeFor, hiddenFields, MANAGE, oauthServerForFile, postForm, redirectParams, tokenOk, UserAgent, VIEW, type Json, type TokenAnswer,
} from '../helpers/oauth'

const env = oauthServerForFile(t)

const otherAuth = { authorization: basic('other-app', 'other-secret') }

async function tokensOf(clientId: string, auth: Record<string, string>, username = 'alice', scope = 'openid'): Promise<TokenAnswer> {
  const { code } = await codeFor(env.issuer, { client_id: clientId, scope }, username, `${username}-password`)
  return tokenOk(env.issuer, { grant_type: 'authorization_code', code }, auth)
}

t.test('the discovery document and the JWKS', async (t) => {
  const res = await call('GET', `${env.issuer}/.well-known/openid-configuration`)
  t.equal(res.status, 200)
  const doc = res.json<Json>()
  t.equal(doc.issuer, env.issuer)
  t.equal(doc.authorization_endpoint, `${env.issuer}/authorize`)
  t.equal(doc.token_endpoint, `${env.issuer}/token`)
  t.equal(doc.userinfo_endpoint, `${env.issuer}/userinfo`)
  t.equal(doc.revocation_endpoint, `${env.issuer}/revoke`)
  t.equal(doc.end_session_endpoint, `${env.issuer}/end_session`)
  t.same(doc.response_types_supported, ['code', 'token', 'id_token token'])
  t.same(doc.id_token_signing_alg_values_supported, ['RS256'])
  t.same(doc.code_challenge_methods_supported, ['S256', 'plain'])
  t.ok((doc.scopes_supported as string[]).includes('openid'))
  t.ok((doc.scopes_supported as string[]).includes(VIEW))
  const jwks = (await call('GET', doc.jwks_uri as string)).json<{ keys: Json[] }>()
  t.equal(jwks.keys.length, 1)
  t.match(jwks.keys[0], { kty: 'RSA', alg: 'RS256', use: 'sig', kid: /.+/, n: /.+/, e: 'AQAB' })
  t.notOk('d' in jwks.keys[0]!, 'no private part')
})

t.test('/tokeninfo: tenant, scopes, allowedServices, client, subject, expiry', async (t) => {
  const tokens = await tokensOf('web-app', WEB_AUTH, 'alice', `openid ${VIEW}`)
  const res = await call('GET', `${env.issuer}/tokeninfo?access_token=${tokens.access_token}`)
  t.equal(res.status, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const info = res.json<Json>()
  t.match(info, { active: true, tenant: 'demo', client_id: 'web-app', subject: 'alice', client_authenticated: true, token_type: 'Bearer' })
  t.same((info.scopes as string[]).sort(), [VIEW, 'openid', 'platform.tenant=demo'].sort())
  t.same(info.allowedServices, [
    { id: 'profile-graph-service', name: 'Profile graph', package: 'profile-graph', scopes: [VIEW] },
    { id: 'profile-graph-reader-service', name: 'Profile graph reader', package: 'profile-graph-reader', scopes: [VIEW] },
  ])
  t.ok((info.expires_in as number) > 3590 && (info.expires_in as number) <= 3600)
  t.type(info.exp, 'number')
  const viaHeader = await call('GET', `${env.issuer}/tokeninfo`, { authorization: `Bearer ${tokens.access_token}` })
  t.equal(viaHeader.status, 200, 'or as a Bearer header')

  const acme = (await tokenOk(env.issuer, { grant_type: 'client_credentials', scope: 'platform.tenant=acme' }, WEB_AUTH)).access_token
  const acmeInfo = (await call('GET', `${env.issuer}/tokeninfo?access_token=${acme}`)).json<Json>()
  t.equal(acmeInfo.tenant, 'acme')
  t.same((acmeInfo.allowedServices as Json[]).map((s) => s.id), ['profile-graph-service'], 'only what acme subscribed to')
  t.equal(acmeInfo.subject, null)

  const bad = await call('GET', `${env.issuer}/tokeninfo?access_token=nope`)
  t.equal(bad.status, 401)
  t.match(bad.json<Json>(), { status: 401, type: 'insufficient_credentials', error: 'invalid_token' })
  t.equal((await call('GET', `${env.issuer}/tokeninfo`)).status, 400)
})

t.test('/userinfo: GET and POST, the claims of the user', async (t) => {
  const tokens = await tokensOf('web-app', WEB_AUTH)
  const expected = { sub: 'alice', preferred_username: 'alice', email: 'alice@example.com', email_verified: false, tenants: ['demo'] }
  const get = await call('GET', `${env.issuer}/userinfo`, { authorization: `Bearer ${tokens.access_token}` })
  t.equal(get.status, 200)
  t.same(get.json<Json>(), expected)
  const post = await call('POST', `${env.issuer}/userinfo`, { authorization: `Bearer ${tokens.access_token}` })
  t.same(post.json<Json>(), expected, 'POST with the header')
  const form = await postForm(`${env.issuer}/userinfo`, { access_token: tokens.access_token })
  t.same(form.json<Json>(), expected, 'POST with the form parameter')
  const both = await postForm(`${env.issuer}/userinfo`, { access_token: tokens.access_token }, { authorization: `Bearer ${tokens.access_token}` })
  t.equal(both.status, 400, 'not twice')

  const idToken = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${env.issuer}/.well-known/jwks.json`)), { issuer: env.issuer, audience: 'web-app' })
  t.equal(idToken.payload.sub, get.json<Json>().sub, 'the same sub as the ID token')
  t.equal(idToken.payload.preferred_username, undefined, 'no username in the ID token without the profile scope')

  const noOpenid = await tokensOf('web-app', WEB_AUTH, 'alice', VIEW)
  const res = await call('GET', `${env.issuer}/userinfo`, { authorization: `Bearer ${noOpenid.access_token}` })
  t.equal(res.status, 403)
  t.equal(res.json<Json>().type, 'insufficient_scope')
  const client = (await tokenOk(env.issuer, { grant_type: 'client_credentials' }, WEB_AUTH)).access_token
  t.equal((await call('GET', `${env.issuer}/userinfo`, { authorization: `Bearer ${client}` })).status, 403, 'a client token has no user')
  t.equal((await call('GET', `${env.issuer}/userinfo`)).status, 401)
  t.equal((await call('GET', `${env.issuer}/userinfo`, { authorization: 'Bearer nope' })).status, 401)
})

t.test('the profile and email scopes: the ID token carries the standard claims userinfo gives', async (t) => {
  // bob's e-mail is verified in the bootstrap file, alice's is not.
  for (const [username, sub, verified, tenants] of [['bob', 'u-bob', true, ['acme', 'acme-eu', 'demo']], ['alice', 'alice', false, ['demo']]] as const) {
    const tokens = await tokensOf('web-app', WEB_AUTH, username, 'openid profile email')
    t.match(tokens.scope, /^(\S+ )*openid profile email platform\.tenant=demo$/, 'granted beside openid')
    const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${env.issuer}/.well-known/jwks.json`)), { issuer: env.issuer, audience: 'web-app' })
    const claims = { sub, preferred_username: username, email: `${username}@example.com`, email_verified: verified }
    t.match(payload, claims)
    t.same((await call('GET', `${env.issuer}/userinfo`, { authorization: `Bearer ${tokens.access_token}` })).json<Json>(), { ...claims, tenants }, 'userinfo says the same, and the user\'s tenants')
    // the /refreshtokens test below counts bob's
    t.equal((await call('DELETE', `${env.issuer}/refreshtokens`, { authorization: `Bearer ${tokens.access_token}` })).status, 204)
  }
  const doc = (await call('GET', `${env.issuer}/.well-known/openid-configuration`)).json<Json>()
  t.ok(['profile', 'email'].every((s) => (doc.scopes_supported as string[]).includes(s)))
  t.ok((doc.claims_supported as string[]).includes('email_verified'))
})

t.test('/refreshtokens: the user lists and deletes their refresh tokens, filtered by client', async (t) => {
  const bobWeb = await tokensOf('web-app', WEB_AUTH, 'bob')
  const bobOther = await tokensOf('other-app', otherAuth, 'bob')
  const aliceWeb = await tokensOf('web-app', WEB_AUTH, 'alice')
  const auth = { authorization: `Bearer ${bobWeb.access_token}` }

  const list = await call('GET', `${env.issuer}/refreshtokens`, auth)
  t.equal(list.status, 200)
  const entries = list.json<Json[]>()
  t.equal(entries.length, 2, "only bob's")
  t.same(entries.map((e) => e.client_id).sort(), ['other-app', 'web-app'])
  for (const e of entries) {
    t.match(e, { id: /^[A-Za-z0-9_-]{22}$/, tenant: 'demo', scope: /platform\.tenant=demo/, created: /^\d{4}-\d\d-\d\dT/ })
    t.notOk(JSON.stringify(e).includes(bobWeb.refresh_token!), 'the token itself is never shown')
  }
  t.equal((await call('GET', `${env.issuer}/refreshtokens?client_id=other-app`, auth)).json<Json[]>().length, 1)

  t.equal((await call('DELETE', `${env.issuer}/refreshtokens?client_id=other-app`, auth)).status, 204)
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: bobOther.refresh_token! }, otherAuth)).status, 400, 'deleted')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: bobWeb.refresh_token! }, WEB_AUTH)).status, 200, 'the other client kept')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: aliceWeb.refresh_token! }, WEB_AUTH)).status, 200, "alice's untouched")

  t.equal((await call('DELETE', `${env.issuer}/refreshtokens`, auth)).status, 204)
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: bobWeb.refresh_token! }, WEB_AUTH)).status, 400)
  t.equal((await call('GET', `${env.issuer}/refreshtokens`, auth)).status, 401, 'the access token went with its refresh token')

  const client = (await tokenOk(env.issuer, { grant_type: 'client_credentials' }, WEB_AUTH)).access_token
  t.equal((await call('GET', `${env.issuer}/refreshtokens`, { authorization: `Bearer ${client}` })).status, 403, 'needs a user token')
  t.equal((await call('GET', `${env.issuer}/refreshtokens`)).status, 401)
})

t.test('/end_session without id_token_hint: the user confirms on a CSRF-protected page; the ID token stays valid', async (t) => {
  const ua = new UserAgent(env.issuer)
  const location = await ua.authorize({ client_id: 'web-app', response_type: 'code', scope: 'openid' }, 'alice', 'alice-password')
  const code = redirectParams(location).query.get('code')!
  const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.equal((await ua.open({ client_id: 'web-app', response_type: 'code' })).status, 302, 'signed in')

  const notThatClient = await ua.send('GET', `${env.issuer}/end_session?client_id=other-app`)
  t.equal(notThatClient.status, 200)
  t.match(notThatClient.text, /Signed out/, 'nothing to end for a client that did not sign in through it')
  t.equal((await ua.open({ client_id: 'web-app', response_type: 'code' })).status, 302, 'another client does not end it')

  // A cross-site link only gets the confirmation page: nothing ends.
  const asked = await ua.send('GET', `${env.issuer}/end_session?client_id=web-app`)
  t.equal(asked.status, 200)
  t.match(asked.text, /Sign out\?/)
  t.equal(asked.headers['set-cookie'], undefined, 'the session cookie is kept')
  t.equal((await ua.open({ client_id: 'web-app', response_type: 'code' })).status, 302, 'still signed in after the GET')
  const form = hiddenFields(asked.text)
  t.equal(form.client_id, 'web-app')
  t.match(form.confirm, /^[A-Za-z0-9_-]{43}$/)

  const endUrl = `${env.issuer}/end_session`
  const origin = new URL(env.issuer).origin
  const forged = await ua.send('POST', endUrl, new URLSearchParams({ client_id: 'web-app', confirm: 'A'.repeat(43) }), { origin })
  t.equal(forged.status, 403, 'a guessed token is refused')
  const crossSite = await ua.send('POST', endUrl, new URLSearchParams(form), { origin: 'https://evil.example' })
  t.equal(crossSite.status, 403, 'another origin is refused')
  t.equal((await ua.open({ client_id: 'web-app', response_type: 'code' })).status, 302, 'still signed in')

  const ended = await ua.send('POST', endUrl, new URLSearchParams(form), { origin })
  t.equal(ended.status, 200)
  t.match(ended.text, /signed out/)
  t.match(String(ended.headers['set-cookie']), /platform_session=; .*Max-Age=0/)
  t.equal((await ua.open({ client_id: 'web-app', response_type: 'code' })).status, 200, 'the sign-in page again')
  await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${env.issuer}/.well-known/jwks.json`)), { issuer: env.issuer, audience: 'web-app' })
  t.pass('the ID token still verifies')

  const ua2 = new UserAgent(env.issuer)
  await ua2.authorize({ client_id: 'web-app', response_type: 'code' }, 'alice', 'alice-password')
  const target = 'http://127.0.0.1:65530/callback'
  const page = await ua2.send('GET', `${env.issuer}/end_session?client_id=web-app&post_logout_redirect_uri=${encodeURIComponent(target)}&state=bye`)
  t.equal(page.status, 200)
  // the answer redirects to the client, which may redirect on: no form-action to block that chain
  t.notMatch(String(page.headers['content-security-policy']), /form-action/)
  const back = await ua2.send('POST', endUrl, new URLSearchParams(hiddenFields(page.text)), { origin })
  t.equal(back.status, 303)
  t.equal(back.headers.location, 'http://127.0.0.1:65530/callback?state=bye')
  const open = await call('GET', `${env.issuer}/end_session?client_id=web-app&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}`)
  t.equal(open.status, 400, 'never an open redirect')
  t.equal((await call('GET', `${env.issuer}/end_session`)).status, 400, 'client_id or id_token_hint is required')
  t.equal((await call('GET', `${env.issuer}/end_session?client_id=nobody`)).status, 400)
  t.equal((await call('GET', `${env.issuer}/end_session?client_id=web-app`)).status, 204, 'a program without a session gets 204')
})

t.test('/end_session with id_token_hint: the hint alone names the client and ends the session at once', async (t) => {
  const ua = new UserAgent(env.issuer)
  const location = await ua.authorize({ client_id: 'web-app', response_type: 'code', scope: 'openid' }, 'alice', 'alice-password')
  const { id_token: idToken } = await tokenOk(env.issuer, { grant_type: 'authorization_code', code: redirectParams(location).query.get('code')! }, WEB_AUTH)
  const target = encodeURIComponent('http://127.0.0.1:65530/callback')

  // What oidc-client-ts' signoutRedirect() sends: id_token_hint, post_logout_redirect_uri, state; no client_id.
  const wrongTarget = await ua.send('GET', `${env.issuer}/end_session?id_token_hint=${idToken!}&post_logout_redirect_uri=${encodeURIComponent('http://127.0.0.1:65530/other')}`)
  t.equal(wrongTarget.status, 400, "the target is checked against the hint's client")
  const mismatch = await ua.send('GET', `${env.issuer}/end_session?id_token_hint=${idToken!}&client_id=other-app`)
  t.equal(mismatch.status, 400, 'client_id must agree with the hint')
  const bad = await ua.send('GET', `${env.issuer}/end_session?id_token_hint=${idToken!.slice(0, -4)}AAAA`)
  t.equal(bad.status, 400, 'a hint whose signature fails is refused')
  t.equal((await ua.open({ client_id: 'web-app', response_type: 'code' })).status, 302, 'none of those ended the session')

  const out = await ua.send('GET', `${env.issuer}/end_session?id_token_hint=${idToken!}&post_logout_redirect_uri=${target}&state=s1`)
  t.equal(out.status, 302)
  t.equal(out.headers.location, 'http://127.0.0.1:65530/callback?state=s1')
  t.match(String(out.headers['set-cookie']), /platform_session=; .*Max-Age=0/)
  t.equal((await ua.open({ client_id: 'web-app', response_type: 'code' })).status, 200, 'signed out without a confirmation page')

  // The same request as a form post (RP-Initiated Logout allows both).
  const ua2 = new UserAgent(env.issuer)
  await ua2.authorize({ client_id: 'web-app', response_type: 'code', scope: 'openid' }, 'alice', 'alice-password')
  const posted = await ua2.send('POST', `${env.issuer}/end_session`, new URLSearchParams({ id_token_hint: idToken!, client_id: 'web-app' }))
  t.equal(posted.status, 200)
  t.match(posted.text, /signed out/)
  t.equal((await ua2.open({ client_id: 'web-app', response_type: 'code' })).status, 200)
})

t.test('unknown paths and methods under /oauth2/v1', async (t) => {
  t.equal((await call('GET', `${env.issuer}/nothing`)).status, 404)
  t.equal((await call('DELETE', `${env.issuer}/userinfo`)).status, 405)
  t.equal((await call('PUT', `${env.issuer}/authorize`)).status, 405)
  const scopes = (await tokenOk(env.issuer, { grant_type: 'client_credentials', scope: `${VIEW} ${MANAGE}` }, WEB_AUTH)).scope
  t.match(scopes, /platform\.tenant=demo/)
})
