// The /token grants besides the code exchange: refresh_token (scope
// narrowing, client binding, no expiry), password (the client
// authentication table of spec 5.2, identity providers, scope rules) and
// client_credentials details.
import t from 'tap'
import {
  basic, WEB_AUTH, call, codeFor, MANAGE, oauthServerForFile, postForm, tokenOk, VIEW, type Json, type TokenAnswer,
} from '../helpers/oauth'

const env = oauthServerForFile(t)

const tokeninfo = async (token: string): Promise<Json> => (await call('GET', `${env.issuer}/tokeninfo?access_token=${token}`)).json<Json>()

async function codeTokens(username = 'alice', password = 'alice-password', scope?: string): Promise<TokenAnswer> {
  const { code } = await codeFor(env.issuer, { client_id: 'web-app', ...(scope === undefined ? {} : { scope }) }, username, password)
  return tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
}

t.test('refresh_token: a new access token, no refresh token in the answer', async (t) => {
  const first = await codeTokens()
  const res = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token! }, WEB_AUTH)
  t.equal(res.status, 200)
  const body = res.json<Json>()
  t.same(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type'])
  t.not(body.access_token, first.access_token)
  t.same((body.scope as string).split(' ').sort(), first.scope.split(' ').sort())
  t.equal(res.headers['cache-control'], 'no-store')
  const again = await tokenOk(env.issuer, { grant_type: 'refresh_token', refresh_token: first.refresh_token! }, WEB_AUTH)
  t.type(again.access_token, 'string', 'a refresh token is used as often as needed')
})

t.test('grant_types without refresh_token: the code exchange still returns a refresh token, and it works (as docs/manual/authorization.md says)', async (t) => {
  const auth = { authorization: basic('two-uris', 'two-secret') }
  const { code } = await codeFor(env.issuer, { client_id: 'two-uris', redirect_uri: 'http://127.0.0.1:65530/one' }, 'alice', 'alice-password')
  const first = await tokenOk(env.issuer, { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:65530/one' }, auth)
  t.type(first.refresh_token, 'string', 'the client lists only authorization_code')
  const refreshed = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token! }, auth)
  t.equal(refreshed.status, 200)
})

t.test('refresh scopes: the intersection of the asked and the granted, never more', async (t) => {
  const first = await codeTokens('alice', 'alice-password', `${VIEW} ${MANAGE}`)
  const refresh = (scope: string): Promise<TokenAnswer> => tokenOk(env.issuer, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, scope }, WEB_AUTH)
  t.equal((await refresh(VIEW)).scope, `${VIEW} platform.tenant=demo`)
  t.same((await refresh(`${VIEW} ${MANAGE} platform.admin openid`)).scope.split(' ').sort(), [MANAGE, VIEW, 'platform.tenant=demo'].sort())
  t.equal((await refresh('platform.admin')).scope, 'platform.tenant=demo', 'nothing granted asked: only the tenant')
  t.equal((await refresh('platform.tenant=demo')).scope.split(' ').length, 3, 'repeating the tenant is fine')
  const narrowed = await refresh(VIEW)
  const graph = await call('PUT', `${env.server.url}/graph/v1/demo/nodes/core/customer/r1`, {
    authorization: `Bearer ${narrowed.access_token}`, 'content-type': 'application/json', 'consent-reference': 'c',
  }, '{}')
  t.equal(graph.status, 403, 'the narrowed token cannot write')
  const other = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, scope: 'platform.tenant=acme' }, WEB_AUTH)
  t.equal(other.status, 400)
  t.equal(other.json<Json>().error, 'invalid_scope', 'another tenant is refused')
})

t.test('a refresh token works only with its client', async (t) => {
  const first = await codeTokens()
  const cross = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token! }, { authorization: basic('other-app', 'other-secret') })
  t.equal(cross.status, 400)
  t.match(cross.json<Json>(), { error: 'invalid_grant', error_description: /another client/ })
  const unauthenticated = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: 'web-app' })
  t.equal(unauthenticated.status, 401, 'its confidential client must authenticate')
  const publicImpostor = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: 'spa' })
  t.equal(publicImpostor.status, 400, 'a public client cannot use it')
  const unknown = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: 'x'.repeat(43) }, WEB_AUTH)
  t.equal(unknown.json<Json>().error, 'invalid_grant')
  const missing = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token' }, WEB_AUTH)
  t.equal(missing.json<Json>().error, 'invalid_request')
})

t.test('refresh tokens do not expire; access tokens do', async (t) => {
  const first = await codeTokens()
  env.server.setClockOffset(10 * 365 * 86_400_000)
  t.teardown(() => env.server.setClockOffset(0))
  t.equal((await call('GET', `${env.issuer}/tokeninfo?access_token=${first.access_token}`)).status, 401, 'the access token expired')
  const graph = await call('GET', `${env.server.url}/graph/v1/demo/nodes/core/customer/x`, { authorization: `Bearer ${first.access_token}` })
  t.equal(graph.status, 401, 'and the graph refuses it')
  const later = await tokenOk(env.issuer, { grant_type: 'refresh_token', refresh_token: first.refresh_token! }, WEB_AUTH)
  t.equal((await tokeninfo(later.access_token)).subject, 'alice', 'ten years on, the refresh token still works')
})

t.test('password grant: the client authentication table of spec 5.2', async (t) => {
  const user = { grant_type: 'password', username: 'alice', password: 'alice-password' }
  const none = await tokenOk(env.issuer, user)
  t.match(await tokeninfo(none.access_token), { client_id: null, client_authenticated: false, subject: 'alice', tenant: 'demo' }, 'no client: none in the token, not trusted')
  const idOnly = await tokenOk(env.issuer, { ...user, client_id: 'legacy-app' })
  t.match(await tokeninfo(idOnly.access_token), { client_id: 'legacy-app', client_authenticated: false }, 'client_id alone: in the token, not trusted')
  const both = await tokenOk(env.issuer, user, { authorization: basic('legacy-app', 'legacy-secret') })
  t.match(await tokeninfo(both.access_token), { client_id: 'legacy-app', client_authenticated: true }, 'client_id and secret: trusted')
  const inBody = await tokenOk(env.issuer, { ...user, client_id: 'legacy-app', client_secret: 'legacy-secret' })
  t.match(await tokeninfo(inBody.access_token), { client_authenticated: true })
  const wrong = await postForm(`${env.issuer}/token`, { ...user, client_id: 'legacy-app', client_secret: 'nope' })
  t.equal(wrong.status, 401)
  t.equal(wrong.json<Json>().error, 'invalid_client')
  const notAllowed = await postForm(`${env.issuer}/token`, user, WEB_AUTH)
  t.equal(notAllowed.json<Json>().error, 'unauthorized_client')
  t.equal(none.refresh_token, undefined, 'no refresh token')
  t.equal(none.expires_in, 3600)
})

t.test('password grant: identity providers, credentials, scopes', async (t) => {
  const user = { grant_type: 'password', username: 'alice', password: 'alice-password' }
  t.equal((await postForm(`${env.issuer}/token`, { ...user, platform_id_provider: 'idp_legacy' })).status, 200)
  for (const provider of ['idp_default', 'idp_custom']) {
    const res = await postForm(`${env.issuer}/token`, { ...user, platform_id_provider: provider })
    t.equal(res.status, 400, provider)
    t.match(res.json<Json>(), { error: 'invalid_request', error_description: /idp_legacy/ }, provider)
  }
  const bad = await postForm(`${env.issuer}/token`, { ...user, password: 'wrong' })
  t.equal(bad.status, 400)
  t.match(bad.json<Json>(), { error: 'invalid_grant', status: 400 })
  const unknown = await postForm(`${env.issuer}/token`, { ...user, username: 'who', password: 'x' })
  t.same(unknown.json<Json>().error_description, bad.json<Json>().error_description, 'an unknown user looks like a wrong password')
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'password', username: 'alice' })).json<Json>().error, 'invalid_request')

  // bob: reader in demo, writer in acme and acme-eu (acme-org).
  const several = await postForm(`${env.issuer}/token`, { grant_type: 'password', username: 'bob', password: 'bob-password' })
  t.match(several.json<Json>(), { error: 'invalid_scope', error_description: /several tenants/ }, 'no client and several tenants: name one')
  const viaClient = await tokenOk(env.issuer, { grant_type: 'password', username: 'bob', password: 'bob-password', client_id: 'legacy-app' })
  t.equal(viaClient.scope, `${VIEW} platform.tenant=demo`, "with a client: the client's parent tenant, limited by roles")
  const acme = await tokenOk(env.issuer, { grant_type: 'password', username: 'bob', password: 'bob-password', scope: 'platform.tenant=acme' })
  t.same(acme.scope.split(' ').sort(), [MANAGE, VIEW, 'platform.tenant=acme'].sort())
  const org = await tokenOk(env.issuer, { grant_type: 'password', username: 'bob', password: 'bob-password', scope: 'platform.org=acme-org' })
  t.same(org.scope.split(' ').sort(), [MANAGE, VIEW, 'platform.org=acme-org'].sort(), 'platform.org alone is allowed')
  for (const scope of ['platform.org=acme-org platform.tenant=acme', 'platform.org=acme-org platform.no_tenant']) {
    const res = await postForm(`${env.issuer}/token`, { grant_type: 'password', username: 'bob', password: 'bob-password', scope })
    t.match(res.json<Json>(), { error: 'invalid_scope', error_description: /cannot be combined/ }, scope)
  }
  const notMember = await postForm(`${env.issuer}/token`, { grant_type: 'password', username: 'carol', password: 'carol-password', scope: 'platform.tenant=demo' })
  t.match(notMember.json<Json>(), { error: 'invalid_scope', error_description: /not a member of tenant "demo"/ })
})

t.test('client_credentials: public clients cannot use it; platform-session-id is recorded', async (t) => {
  const pub = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials', client_id: 'spa' })
  t.equal(pub.status, 401)
  const notAllowed = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('other-app', 'other-secret') })
  t.equal(notAllowed.json<Json>().error, 'unauthorized_client')
  const withParam = await tokenOk(env.issuer, { grant_type: 'client_credentials', 'platform-session-id': 'sess-1' }, { authorization: basic('cc-only', 'cc-secret'), 'platform-session-id': 'gw' })
  t.equal((await tokeninfo(withParam.access_token))['platform-session-id'], 'sess-1', 'the client value wins')
  const withHeader = await tokenOk(env.issuer, { grant_type: 'client_credentials' }, { authorization: basic('cc-only', 'cc-secret'), 'platform-session-id': 'gw' })
  t.equal((await tokeninfo(withHeader.access_token))['platform-session-id'], 'gw')
  const bad = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials', 'platform-session-id': 'has space' }, { authorization: basic('cc-only', 'cc-secret') })
  t.equal(bad.json<Json>().error, 'invalid_request')
  const twice = await postForm(`${env.issuer}/token`, { grant_type: ['client_credentials', 'client_credentials'] }, { authorization: basic('cc-only', 'cc-secret') })
  t.equal(twice.json<Json>().error, 'invalid_request', 'a parameter twice')
})
