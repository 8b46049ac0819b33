// The implicit flows (token, id_token token) over HTTP: tokens in the
// fragment, nonce, at_hash, the tenant selection of the implicit flow,
// platform.org and platform.no_tenant, and id_token_hint for another tenant
// without a sign-in prompt.
import t from 'tap'
import { createHash } from 'node:crypto'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { call, MANAGE, oauthServerForFile, redirectParams, UserAgent, VIEW, type Json } from '../helpers/oauth'

const env = oauthServerForFile(t)

const SPA = { client_id: 'spa' }
const jwks = (): ReturnType<typeof createRemoteJWKSet> => createRemoteJWKSet(new URL(`${env.issuer}/.well-known/jwks.json`))

async function implicit(params: Record<string, string>, username: string, password: string): Promise<URLSearchParams> {
  const location = await new UserAgent(env.issuer).authorize({ ...SPA, response_type: 'token', ...params }, username, password)
  const { base, query, fragment } = redirectParams(location)
  if (base !== 'http://127.0.0.1:65530/spa') throw new Error(`redirected to ${base}`)
  if ([...query].length !== 0) throw new Error('the implicit flow put something in the query')
  return fragment
}

t.test('response_type=token: the access token in the fragment, never a refresh token', async (t) => {
  const f = await implicit({ state: 'i-1' }, 'alice', 'alice-password')
  t.match(f.get('access_token'), /^[A-Za-z0-9_-]{51}$/)
  t.equal(f.get('token_type'), 'Bearer')
  t.equal(f.get('expires_in'), '3600')
  t.equal(f.get('state'), 'i-1')
  t.equal(f.get('refresh_token'), null)
  t.equal(f.get('id_token'), null)
  t.same(f.get('scope')!.split(' ').sort(), [MANAGE, VIEW, 'platform.tenant=demo'].sort())
  const info = (await call('GET', `${env.issuer}/tokeninfo?access_token=${f.get('access_token')!}`)).json<Json>()
  t.equal(info.subject, 'alice')
  t.equal(info.client_authenticated, false, 'issued without client authentication')
})

t.test('response_type="id_token token": nonce required, ID token with nonce and at_hash', async (t) => {
  const ua = new UserAgent(env.issuer)
  const noNonce = await ua.open({ ...SPA, response_type: 'id_token token', state: 's' })
  t.equal(noNonce.status, 302)
  const err = redirectParams(noNonce.headers.location as string)
  t.equal(err.fragment.get('error'), 'invalid_request')
  t.match(err.fragment.get('error_description'), /nonce is required/)
  t.equal(err.fragment.get('state'), 's')
  t.equal([...err.query].length, 0, 'implicit errors only in the fragment')

  const f = await implicit({ response_type: 'id_token token', nonce: 'n-42', scope: 'openid' }, 'alice', 'alice-password')
  const { payload } = await jwtVerify(f.get('id_token')!, jwks(), { issuer: env.issuer, audience: 'spa', algorithms: ['RS256'] })
  t.equal(payload.nonce, 'n-42')
  t.equal(payload.sub, 'alice')
  t.equal(payload.email, 'alice@example.com')
  t.equal(payload.at_hash, createHash('sha256').update(f.get('access_token')!).digest().subarray(0, 16).toString('base64url'))
  t.match(f.get('scope'), /openid/)

  const orderFree = await implicit({ response_type: 'token id_token', nonce: 'n' }, 'alice', 'alice-password')
  t.type(orderFree.get('id_token'), 'string', '"token id_token" is the same response type, and openid is implied')
})

t.test('tenant selection: the only tenant, none, several', async (t) => {
  t.match((await implicit({}, 'carol', 'carol-password')).get('scope'), /platform\.tenant=acme$/, 'the one tenant of the user')
  const none = await new UserAgent(env.issuer).authorize({ ...SPA, response_type: 'token', state: 'z' }, 'nobody', 'nobody-password')
  const nf = redirectParams(none).fragment
  t.equal(nf.get('error'), 'access_denied')
  t.match(nf.get('error_description'), /belongs to no tenant/)
  t.match((await implicit({}, 'bob', 'bob-password')).get('scope'), /platform\.tenant=demo$/, 'several: the client tenant when the user is in it')
  const acme = await implicit({ scope: 'platform.tenant=acme' }, 'bob', 'bob-password')
  t.same(acme.get('scope')!.split(' ').sort(), [MANAGE, VIEW, 'platform.tenant=acme'].sort())
})

t.test('platform.org and platform.no_tenant in the implicit flow', async (t) => {
  const org = await implicit({ scope: 'platform.org=acme-org' }, 'bob', 'bob-password')
  t.same(org.get('scope')!.split(' ').sort(), [MANAGE, VIEW, 'platform.org=acme-org'].sort())
  const info = (await call('GET', `${env.issuer}/tokeninfo?access_token=${org.get('access_token')!}`)).json<Json>()
  t.equal(info.tenant, null)
  t.equal(info.org, 'acme-org')
  const graph = await call('GET', `${env.server.url}/graph/v1/acme/nodes/core/customer/x`, { authorization: `Bearer ${org.get('access_token')!}` })
  t.equal(graph.status, 403, 'an organization token is no tenant token')

  const ua = new UserAgent(env.issuer)
  const combined = await ua.authorize({ ...SPA, response_type: 'token', scope: 'platform.org=acme-org platform.tenant=acme' }, 'bob', 'bob-password')
  t.equal(redirectParams(combined).fragment.get('error'), 'invalid_scope')
  t.equal(redirectParams(combined).fragment.get('state'), null, 'checked before any sign-in')
  const notInOrg = await ua.authorize({ ...SPA, response_type: 'token', scope: 'platform.org=globex-org' }, 'bob', 'bob-password')
  t.equal(redirectParams(notInOrg).fragment.get('error'), 'access_denied')

  const noTenant = await implicit({ response_type: 'id_token token', nonce: 'n', scope: 'openid platform.no_tenant' }, 'bob', 'bob-password')
  t.equal(noTenant.get('scope'), 'openid platform.no_tenant', 'outside any tenant: identity only')
  const userinfo = await call('GET', `${env.issuer}/userinfo`, { authorization: `Bearer ${noTenant.get('access_token')!}` })
  t.equal(userinfo.status, 200)
  t.equal(userinfo.json<Json>().sub, 'u-bob')
})

t.test('id_token_hint: a token for another tenant without a sign-in prompt, never wider', async (t) => {
  const first = await implicit({ response_type: 'id_token token', nonce: 'n1' }, 'bob', 'bob-password')
  t.match(first.get('scope'), /platform\.tenant=demo$/)
  const hint = first.get('id_token')!

  // A fresh browser without a session: the hint alone signs bob in.
  const fresh = new UserAgent(env.issuer)
  const res = await fresh.open({ ...SPA, response_type: 'token', scope: 'platform.tenant=acme', id_token_hint: hint })
  t.equal(res.status, 302, 'no sign-in page')
  const acme = redirectParams(res.headers.location as string).fragment
  t.same(acme.get('scope')!.split(' ').sort(), [MANAGE, VIEW, 'platform.tenant=acme'].sort())
  t.equal(fresh.cookies.has('platform_session'), false, 'the hint makes no session')

  const eu = redirectParams((await fresh.open({ ...SPA, response_type: 'token', scope: `platform.tenant=acme-eu ${MANAGE}`, id_token_hint: hint })).headers.location as string).fragment
  t.equal(eu.get('scope'), 'platform.tenant=acme-eu', 'the subscription still limits the scopes')
  const globex = redirectParams((await fresh.open({ ...SPA, response_type: 'token', scope: 'platform.tenant=globex', id_token_hint: hint })).headers.location as string).fragment
  t.equal(globex.get('error'), 'access_denied', 'nor tenant access')

  const forged = `${hint.slice(0, -4)}AAAA`
  const bad = redirectParams((await fresh.open({ ...SPA, response_type: 'token', id_token_hint: forged, state: 'h' })).headers.location as string).fragment
  t.equal(bad.get('error'), 'invalid_request')
  t.equal(bad.get('state'), 'h')
  const otherClient = await fresh.send('GET', fresh.authorizeUrl({ client_id: 'web-app', response_type: 'code', id_token_hint: hint }))
  t.equal(redirectParams(otherClient.headers.location as string).query.get('error'), 'invalid_request', 'a hint issued to another client is refused')

  env.server.setClockOffset(3601_000)
  t.teardown(() => env.server.setClockOffset(0))
  const expired = redirectParams((await fresh.open({ ...SPA, response_type: 'token', id_token_hint: hint })).headers.location as string).fragment
  t.equal(expired.get('error'), 'invalid_request', 'an expired hint is refused')
})
