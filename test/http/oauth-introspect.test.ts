// RFC 7662 introspection at /oauth2/v1/introspect and the RFC 8414 metadata
// (src/auth/endpoints/introspect.ts, discovery.ts): who may see which token,
// {"active": false} for a dead one, the platform fields beside the standard
// ones; and openid-client, unchanged, discovering through RFC 8414's path
// form and introspecting.
import t from 'tap'
import { basic, call, clientToken, codeFor, oauthServerForFile, postForm, tokenOk, VIEW, WEB_AUTH } from '../helpers/oauth'

const env = oauthServerForFile(t)
const REDIRECT = 'http://127.0.0.1:65530/callback'

type Introspection = Record<string, unknown> & { active: boolean }
const introspect = async (form: Record<string, string>, headers: Record<string, string>): Promise<Introspection> => {
  const res = await postForm(`${env.issuer}/introspect`, form, headers)
  if (res.status !== 200) throw new Error(`introspection failed: ${res.status} ${res.text}`)
  t.equal(res.headers['cache-control'], 'no-store')
  return res.json<Introspection>()
}

t.test('discovery names the endpoints a client library looks for', async (t) => {
  const doc = (await call('GET', `${env.issuer}/.well-known/openid-configuration`)).json<Record<string, unknown>>()
  t.equal(doc.introspection_endpoint, `${env.issuer}/introspect`)
  t.equal(doc.revocation_endpoint, `${env.issuer}/revoke`)
  t.equal(doc.end_session_endpoint, `${env.issuer}/end_session`)
  const origin = new URL(env.issuer).origin
  for (const url of [`${env.issuer}/.well-known/oauth-authorization-server`, `${origin}/.well-known/oauth-authorization-server/oauth2/v1`]) {
    const meta = await call('GET', url)
    t.equal(meta.status, 200, url)
    t.same(meta.json(), doc, 'the RFC 8414 metadata is the same document')
  }
  t.equal((await call('GET', `${origin}/.well-known/oauth-authorization-server`)).status, 404, 'the issuer has a path: the bare form is not it')
  t.equal((await call('GET', `${origin}/.well-known/oauth-authorization-server/other`)).status, 404)
  t.equal((await call('GET', `${origin}/.well-known/openid-configuration`)).status, 404)
})

t.test('an access token: the standard and the platform fields', async (t) => {
  const { code } = await codeFor(env.issuer, { client_id: 'web-app', redirect_uri: REDIRECT, scope: `openid ${VIEW}` }, 'alice', 'alice-password')
  const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, WEB_AUTH)
  const seen = await introspect({ token: tokens.access_token }, WEB_AUTH)
  t.match(seen, {
    active: true, client_id: 'web-app', sub: 'alice', username: 'alice', token_type: 'Bearer', iss: env.issuer,
    tenant: 'demo', subject: 'alice', client_authenticated: true,
  })
  t.equal(seen.scope, tokens.scope)
  t.type(seen.exp, 'number')
  t.type(seen.iat, 'number')
  t.ok((seen.exp as number) > (seen.iat as number))
  t.type(seen.allowedServices, Array)
  t.type(seen['platform-session-id'], 'string')

  const refresh = await introspect({ token: tokens.refresh_token!, token_type_hint: 'refresh_token' }, WEB_AUTH)
  t.match(refresh, { active: true, client_id: 'web-app', sub: 'alice', token_type: 'refresh_token' })
  const refreshUnhinted = await introspect({ token: tokens.refresh_token! }, WEB_AUTH)
  t.equal(refreshUnhinted.active, true, 'the hint only orders the search')
  t.equal((await introspect({ token: tokens.refresh_token! }, { authorization: basic('other-app', 'other-secret') })).active, false, "another client does not see a client's refresh token")

  const revoked = await postForm(`${env.issuer}/revoke`, { token: tokens.refresh_token! }, WEB_AUTH)
  t.equal(revoked.status, 200)
  t.same(await introspect({ token: tokens.access_token }, WEB_AUTH), { active: false }, 'revoked with its refresh token')
  t.same(await introspect({ token: tokens.refresh_token! }, WEB_AUTH), { active: false })
})

t.test('who sees a token, and dead tokens', async (t) => {
  const token = await clientToken(env.issuer, 'web-app', 'web-secret', VIEW)
  t.equal((await introspect({ token }, { authorization: basic('other-app', 'other-secret') })).active, true, 'a confidential client of the tenant (a resource server)')
  t.same(await introspect({ token, client_id: 'spa' }, {}), { active: false }, 'a public client sees only its own tokens')
  t.same(await introspect({ token: 'no-such-token' }, WEB_AUTH), { active: false })

  const anonymous = await postForm(`${env.issuer}/introspect`, { token }, {})
  t.equal(anonymous.status, 401)
  t.equal(anonymous.json<{ error: string }>().error, 'invalid_client')
  const wrongSecret = await postForm(`${env.issuer}/introspect`, { token }, { authorization: basic('web-app', 'wrong') })
  t.equal(wrongSecret.status, 401)
  const noToken = await postForm(`${env.issuer}/introspect`, {}, WEB_AUTH)
  t.equal(noToken.status, 400)
  t.equal(noToken.json<{ error: string }>().error, 'invalid_request')
  t.equal((await call('GET', `${env.issuer}/introspect?token=${token}`, WEB_AUTH)).status, 405)

  env.server.setClockOffset(2 * 3600 * 1000)
  t.teardown(() => env.server.setClockOffset(0))
  t.same(await introspect({ token }, WEB_AUTH), { active: false }, 'expired')
})

t.test('openid-client: RFC 8414 discovery (path form) and tokenIntrospection', async (t) => {
  const oidc = await import('openid-client')
  const config = await oidc.discovery(new URL(env.issuer), 'web-app', 'web-secret', oidc.ClientSecretBasic('web-secret'), {
    algorithm: 'oauth2', execute: [oidc.allowInsecureRequests],
  })
  t.equal(config.serverMetadata().introspection_endpoint, `${env.issuer}/introspect`)
  const token = await clientToken(env.issuer, 'web-app', 'web-secret', VIEW)
  const seen = await oidc.tokenIntrospection(config, token)
  t.equal(seen.active, true)
  t.equal(seen.client_id, 'web-app')
  t.equal(seen.token_type, 'Bearer')
  t.equal(seen.tenant, 'demo', 'the platform fields come through')
  const dead = await oidc.tokenIntrospection(config, 'not-a-token')
  t.equal(dead.active, false)
})
