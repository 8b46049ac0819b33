// POST /revoke, every rule: RFC 7009 answers, own tokens only, tokens issued
// without client authentication revocable by anyone holding them, the mixed
// case (401 after revoking the unauthenticated ones), refresh tokens taking
// their access tokens along, and the graph refusing a revoked token at once.
import t from 'tap'
import {
  basic, WEB_AUTH, call, codeFor, oauthServerForFile, postForm, tokenOk, type Json, type TokenAnswer,
} from '../helpers/oauth'

const env = oauthServerForFile(t)

const ccAuth = { authorization: basic('cc-only', 'cc-secret') }
const live = async (token: string): Promise<boolean> => (await call('GET', `${env.issuer}/tokeninfo?access_token=${token}`)).status === 200
const graphStatus = async (token: string): Promise<number> =>
  (await call('GET', `${env.server.url}/graph/v1/demo/nodes/core/customer/x`, { authorization: `Bearer ${token}` })).status

async function webTokens(): Promise<TokenAnswer> {
  const { code } = await codeFor(env.issuer, { client_id: 'web-app' }, 'alice', 'alice-password')
  return tokenOk(env.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
}
const ccToken = async (): Promise<string> => (await tokenOk(env.issuer, { grant_type: 'client_credentials' }, ccAuth)).access_token
/** A token issued without client authentication (password grant, no client). */
const openToken = async (): Promise<string> => (await tokenOk(env.issuer, { grant_type: 'password', username: 'alice', password: 'alice-password' })).access_token

t.test('a client revokes its own access token: 200, and the graph refuses it at once', async (t) => {
  const token = await ccToken()
  t.not(await graphStatus(token), 401)
  const res = await postForm(`${env.issuer}/revoke`, { token }, ccAuth)
  t.equal(res.status, 200)
  t.equal(res.text, '')
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(await graphStatus(token), 401, 'refused at once')
  const body = (await call('GET', `${env.server.url}/graph/v1/demo/nodes/core/customer/x`, { authorization: `Bearer ${token}` })).json<Json>()
  t.match(body, { status: 401, type: 'insufficient_credentials', message: /invalid, expired or revoked/ })
  t.type(body.moreInfo, 'string')
  t.equal((await postForm(`${env.issuer}/revoke`, { token }, ccAuth)).status, 200, 'again: still 200')
  t.equal((await postForm(`${env.issuer}/revoke`, { token: 'never-issued' }, ccAuth)).status, 200, 'an unknown token: 200')
})

t.test('body credentials work like Basic', async (t) => {
  const token = await ccToken()
  t.equal((await postForm(`${env.issuer}/revoke`, { token, client_id: 'cc-only', client_secret: 'cc-secret' })).status, 200)
  t.notOk(await live(token))
})

t.test('a refresh token: revoked with the access tokens issued with it', async (t) => {
  const tokens = await webTokens()
  const refreshed = await tokenOk(env.issuer, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, WEB_AUTH)
  t.equal((await postForm(`${env.issuer}/revoke`, { token: tokens.refresh_token!, token_type_hint: 'refresh_token' }, WEB_AUTH)).status, 200)
  const again = await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, WEB_AUTH)
  t.equal(again.json<Json>().error, 'invalid_grant')
  t.notOk(await live(tokens.access_token), 'the first access token')
  t.notOk(await live(refreshed.access_token), 'the refreshed access token')
})

t.test("a client cannot revoke another client's token", async (t) => {
  const token = await ccToken()
  const res = await postForm(`${env.issuer}/revoke`, { token }, WEB_AUTH)
  t.equal(res.status, 403)
  t.match(res.json<Json>(), { error: 'unauthorized_client', type: 'forbidden' })
  t.ok(await live(token), 'not revoked')
  const tokens = await webTokens()
  const refresh = await postForm(`${env.issuer}/revoke`, { token: tokens.refresh_token! }, ccAuth)
  t.equal(refresh.status, 403, 'nor its refresh token')
  t.type((await tokenOk(env.issuer, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, WEB_AUTH)).access_token, 'string')
})

t.test('a token of an authenticated client needs its credentials: 401 without them', async (t) => {
  const token = await ccToken()
  const res = await postForm(`${env.issuer}/revoke`, { token })
  t.equal(res.status, 401)
  t.match(res.json<Json>(), { error: 'invalid_client', type: 'insufficient_credentials' })
  t.ok(await live(token))
  const idOnly = await postForm(`${env.issuer}/revoke`, { token, client_id: 'cc-only' })
  t.equal(idOnly.status, 401, 'client_id without the secret is no authentication')
  const wrong = await postForm(`${env.issuer}/revoke`, { token }, { authorization: basic('cc-only', 'wrong') })
  t.equal(wrong.status, 401)
  t.ok(await live(token))
})

t.test('a token issued without client authentication: anyone holding it may revoke it', async (t) => {
  const a = await openToken()
  t.equal((await postForm(`${env.issuer}/revoke`, { token: a })).status, 200, 'no credentials')
  t.notOk(await live(a))
  const b = await openToken()
  t.equal((await postForm(`${env.issuer}/revoke`, { token: b }, ccAuth)).status, 200, 'any authenticated client')
  t.notOk(await live(b))
  const implicit = (await tokenOk(env.issuer, { grant_type: 'password', username: 'alice', password: 'alice-password', client_id: 'legacy-app' })).access_token
  t.equal((await postForm(`${env.issuer}/revoke`, { token: implicit })).status, 200, 'client_id without secret at issue: not authenticated')
  t.notOk(await live(implicit))
})

t.test('the mixed case without credentials: the unauthenticated tokens are revoked, then 401', async (t) => {
  const open1 = await openToken()
  const open2 = await openToken()
  const owned = await ccToken()
  const res = await postForm(`${env.issuer}/revoke`, { token: [open1, owned, open2] })
  t.equal(res.status, 401)
  t.match(res.json<Json>(), { error: 'invalid_client', error_description: /were revoked/ })
  t.notOk(await live(open1))
  t.notOk(await live(open2))
  t.ok(await live(owned), 'the authenticated client token stays')
  t.equal((await postForm(`${env.issuer}/revoke`, { token: [owned] }, ccAuth)).status, 200)
  t.notOk(await live(owned))
})

t.test('several tokens with credentials: own and unauthenticated ones revoked; access and refresh mixed', async (t) => {
  const tokens = await webTokens()
  const open = await openToken()
  const res = await postForm(`${env.issuer}/revoke`, { token: [tokens.access_token, open, tokens.refresh_token!] }, WEB_AUTH)
  t.equal(res.status, 200)
  t.notOk(await live(tokens.access_token))
  t.notOk(await live(open))
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, WEB_AUTH)).status, 400)
})

t.test('revoke request errors', async (t) => {
  const none = await postForm(`${env.issuer}/revoke`, {}, ccAuth)
  t.equal(none.status, 400)
  t.equal(none.json<Json>().error, 'invalid_request')
  t.equal((await call('GET', `${env.issuer}/revoke`)).status, 405)
  t.equal((await call('POST', `${env.issuer}/revoke`, { 'content-type': 'application/json' }, '{}')).status, 415)
})
