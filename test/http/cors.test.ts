// CORS (src/http/cors.ts, src/auth/helpers/client-cors.ts): preflights are
// answered before routing and authentication; discovery, JWKS and the RFC
// 8414 metadata are public; the token, userinfo, revoke, introspection and
// end-session endpoints are readable by the calling client's origins (its
// redirect URIs' and its cors_origins); the graph API and the event stream
// by --cors-origins only.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'
import { adminToken, basic, call, clientToken, oauthServerForFile, postForm, VIEW, WEB_AUTH } from '../helpers/oauth'
import { statuses } from '../helpers/raw-http'
import { getToken, removeDir, startServer } from '../helpers/server'
import { until } from '../../bench/wait'

const GRAPH_ORIGIN = 'https://app.example'
// --trust-proxy: the 429 test below spends an address's budget of failed checks on a forwarded address, not on 127.0.0.1.
const env = oauthServerForFile(t, { args: ['--cors-origins', `${GRAPH_ORIGIN},http://localhost:3000`, '--trust-proxy', '127.0.0.1'] })
/** The origin of the fixture's web-app and spa redirect URIs. */
const WEB_ORIGIN = 'http://127.0.0.1:65530'
/** demo-enricher's origin: a registered client's, but not web-app's. */
const OTHER_CLIENT_ORIGIN = 'http://127.0.0.1:8080'
const EVIL = 'https://evil.example'

const preflight = (url: string, origin: string, method = 'POST', headers = 'authorization, content-type'): ReturnType<typeof call> =>
  call('OPTIONS', url, { origin, 'access-control-request-method': method, 'access-control-request-headers': headers })

t.test('discovery, JWKS and the RFC 8414 metadata are readable from any origin', async (t) => {
  const root = `${new URL(env.issuer).origin}/.well-known/oauth-authorization-server/oauth2/v1`
  for (const url of [`${env.issuer}/.well-known/openid-configuration`, `${env.issuer}/.well-known/jwks.json`, `${env.issuer}/.well-known/oauth-authorization-server`, root]) {
    const pre = await preflight(url, EVIL, 'GET', 'x-custom')
    t.equal(pre.status, 204, `preflight ${url}`)
    t.equal(pre.headers['access-control-allow-origin'], '*')
    const got = await call('GET', url, { origin: EVIL })
    t.equal(got.status, 200, url)
    t.equal(got.headers['access-control-allow-origin'], '*')
  }
})

t.test('the token endpoint: preflight and answer per client origin', async (t) => {
  const pre = await preflight(`${env.issuer}/token`, WEB_ORIGIN)
  t.equal(pre.status, 204)
  t.equal(pre.headers['access-control-allow-origin'], WEB_ORIGIN)
  t.match(pre.headers['access-control-allow-headers'], /authorization/)
  t.match(pre.headers['access-control-allow-methods'], /POST/)
  t.match(pre.headers.vary, /origin/i)
  t.ok(Number(pre.headers['access-control-max-age']) > 0)

  const denied = await preflight(`${env.issuer}/token`, EVIL)
  t.equal(denied.status, 403, 'an origin no client has is refused at the preflight')
  t.equal(denied.headers['access-control-allow-origin'], undefined)

  const ok = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { ...WEB_AUTH, origin: WEB_ORIGIN })
  t.equal(ok.status, 200)
  t.equal(ok.headers['access-control-allow-origin'], WEB_ORIGIN)
  t.match(ok.headers['access-control-expose-headers'], /www-authenticate/)

  const foreign = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { ...WEB_AUTH, origin: OTHER_CLIENT_ORIGIN })
  t.equal(foreign.status, 400, "another client's origin is refused before the grant")
  t.equal(foreign.json<{ error: string }>().error, 'invalid_request')
  t.equal(foreign.headers['access-control-allow-origin'], undefined)

  const noOrigin = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, WEB_AUTH)
  t.equal(noOrigin.status, 200, 'a request without Origin (not a browser) is unchanged')
  t.equal(noOrigin.headers['access-control-allow-origin'], undefined)

  const ownOrigin = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { ...WEB_AUTH, origin: new URL(env.issuer).origin })
  t.equal(ownOrigin.status, 200, "the server's own origin is not refused")

  const badGrant = await postForm(`${env.issuer}/token`, { grant_type: 'authorization_code', code: 'nope', redirect_uri: `${WEB_ORIGIN}/callback` }, { ...WEB_AUTH, origin: WEB_ORIGIN })
  t.equal(badGrant.status, 400)
  t.equal(badGrant.headers['access-control-allow-origin'], WEB_ORIGIN, 'an error is readable by the client page too')
})

t.test('userinfo and revoke: the client comes from the token or the credentials', async (t) => {
  const token = await clientToken(env.issuer, 'web-app', 'web-secret', VIEW)
  const info = await call('GET', `${env.issuer}/userinfo`, { authorization: `Bearer ${token}`, origin: WEB_ORIGIN })
  t.equal(info.status, 403, 'a client token has no openid scope')
  t.equal(info.headers['access-control-allow-origin'], WEB_ORIGIN, "the token's client's origin may read the answer")
  const other = await call('GET', `${env.issuer}/userinfo`, { authorization: `Bearer ${token}`, origin: OTHER_CLIENT_ORIGIN })
  t.equal(other.headers['access-control-allow-origin'], undefined, "another client's origin may not")
  t.match(other.headers.vary, /origin/i)

  const revoked = await postForm(`${env.issuer}/revoke`, { token }, { ...WEB_AUTH, origin: WEB_ORIGIN })
  t.equal(revoked.status, 200)
  t.equal(revoked.headers['access-control-allow-origin'], WEB_ORIGIN)
  const refused = await postForm(`${env.issuer}/revoke`, { token }, { ...WEB_AUTH, origin: EVIL })
  t.equal(refused.status, 400)
})

t.test('cors_origins of a client: admin API, validated, effective', async (t) => {
  const admin = { authorization: `Bearer ${await adminToken(env.issuer)}`, 'content-type': 'application/json' }
  const spaOrigin = 'https://spa.example'
  const bad = await call('POST', `${env.issuer}/admin/clients`, admin, JSON.stringify({
    client_id: 'cors-bad', tenant: 'demo', public: true, redirect_uris: [`${WEB_ORIGIN}/x`], scopes: [VIEW], grant_types: ['authorization_code'], cors_origins: [`${spaOrigin}/`],
  }))
  t.equal(bad.status, 400)
  t.match(bad.text, /cors_origins/)
  t.match(bad.json<{ message: string }>().message, /write "https:\/\/spa\.example"/, 'names the origin to write')

  const before = await preflight(`${env.issuer}/token`, spaOrigin)
  t.equal(before.status, 403)
  const created = await call('POST', `${env.issuer}/admin/clients`, admin, JSON.stringify({
    client_id: 'cors-app', tenant: 'demo', redirect_uris: [`${WEB_ORIGIN}/cors`], scopes: [VIEW], grant_types: ['client_credentials'], cors_origins: [spaOrigin],
  }))
  t.equal(created.status, 201)
  const { client_secret: secret, cors_origins: listed } = created.json<{ client_secret: string; cors_origins: string[] }>()
  t.same(listed, [spaOrigin])
  const after = await preflight(`${env.issuer}/token`, spaOrigin)
  t.equal(after.status, 204)
  t.equal(after.headers['access-control-allow-origin'], spaOrigin)
  const tokens = await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('cors-app', secret), origin: spaOrigin })
  t.equal(tokens.status, 200)
  t.equal(tokens.headers['access-control-allow-origin'], spaOrigin)

  const cleared = await call('PUT', `${env.issuer}/admin/clients/cors-app`, admin, JSON.stringify({ cors_origins: [] }))
  t.same(cleared.json<{ cors_origins: string[] }>().cors_origins, [])
  t.equal((await preflight(`${env.issuer}/token`, spaOrigin)).status, 403, 'removed again')
})

t.test('the graph API allows the --cors-origins only', async (t) => {
  const url = `${new URL(env.issuer).origin}/graph/v1/demo/nodes/person/p1`
  const pre = await preflight(url, GRAPH_ORIGIN, 'PUT', 'authorization, content-type, platform-context-trace-id')
  t.equal(pre.status, 204)
  t.equal(pre.headers['access-control-allow-origin'], GRAPH_ORIGIN)
  t.match(pre.headers['access-control-allow-headers'], /platform-context-trace-id/)
  t.match(pre.headers['access-control-allow-methods'], /PUT/)
  t.equal((await preflight(url, WEB_ORIGIN, 'PUT')).status, 403, "a client's origin is not a graph origin")

  const token = await clientToken(env.issuer, 'demo-enricher', 'demo-secret', VIEW)
  const got = await call('GET', url, { authorization: `Bearer ${token}`, origin: GRAPH_ORIGIN })
  t.equal(got.status, 200, 'a list of nodes (empty)')
  t.equal(got.headers['access-control-allow-origin'], GRAPH_ORIGIN)
  const second = await call('GET', url, { authorization: `Bearer ${token}`, origin: 'http://localhost:3000' })
  t.equal(second.headers['access-control-allow-origin'], 'http://localhost:3000', 'the second listed origin')
  const other = await call('GET', url, { authorization: `Bearer ${token}`, origin: EVIL })
  t.equal(other.status, 200, 'the request is served; only its answer is not readable')
  t.equal(other.headers['access-control-allow-origin'], undefined)
  const unauthenticated = await call('GET', url, { origin: GRAPH_ORIGIN })
  t.equal(unauthenticated.status, 401)
  t.equal(unauthenticated.headers['access-control-allow-origin'], GRAPH_ORIGIN)
  t.match(unauthenticated.headers['access-control-expose-headers'], /www-authenticate/)

  const plainOptions = await call('OPTIONS', url, { authorization: `Bearer ${token}` })
  t.equal(plainOptions.status, 405, 'an OPTIONS that is no preflight is routed as before')
})

/** The status of a WebSocket upgrade of the event stream sent with `origin`. */
function upgradeStatus(token: string, origin: string): Promise<number> {
  const url = new URL(`${new URL(env.issuer).origin}/graph/v1/demo/events/stream`)
  url.searchParams.set('access_token', token)
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', origin },
    })
    req.on('upgrade', (res, socket) => { socket.destroy(); resolve(res.statusCode ?? 0) })
    req.on('response', (res) => { res.resume(); resolve(res.statusCode ?? 0) })
    req.on('error', reject)
    req.end()
  })
}

t.test('the event stream opens for --cors-origins and this server, not for other pages', async (t) => {
  const token = await clientToken(env.issuer, 'demo-enricher', 'demo-secret', VIEW)
  t.equal(await upgradeStatus(token, GRAPH_ORIGIN), 101)
  t.equal(await upgradeStatus(token, new URL(env.issuer).origin), 101)
  t.equal(await upgradeStatus(token, EVIL), 403)
})

t.test('introspection and end_session take part as client endpoints', async (t) => {
  t.equal((await preflight(`${env.issuer}/introspect`, WEB_ORIGIN)).status, 204)
  const token = await clientToken(env.issuer, 'web-app', 'web-secret', VIEW)
  const seen = await postForm(`${env.issuer}/introspect`, { token }, { ...WEB_AUTH, origin: WEB_ORIGIN })
  t.equal(seen.headers['access-control-allow-origin'], WEB_ORIGIN)
  const end = await call('GET', `${env.issuer}/end_session?client_id=web-app`, { origin: WEB_ORIGIN })
  t.equal(end.headers['access-control-allow-origin'], WEB_ORIGIN)
  t.equal((await preflight(`${env.issuer}/admin/clients`, WEB_ORIGIN, 'GET')).status, 403, 'the admin API is no browser endpoint')
})

t.test('error answers of the client endpoints are readable by the page (no network error instead of the status)', async (t) => {
  const readable = (what: string, res: { status: number; headers: Record<string, unknown> }, status: number, origin = WEB_ORIGIN): void => {
    t.equal(res.status, status, what)
    t.equal(res.headers['access-control-allow-origin'], origin, `${what}: Access-Control-Allow-Origin`)
    t.match(res.headers.vary, /origin/i, `${what}: Vary`)
    t.match(res.headers['access-control-expose-headers'], /www-authenticate/, `${what}: exposed headers`)
  }
  const userinfo = `${env.issuer}/userinfo`
  readable('userinfo without a token', await call('GET', userinfo, { origin: WEB_ORIGIN }), 401)
  readable('userinfo with an unknown token', await call('GET', userinfo, { origin: WEB_ORIGIN, authorization: 'Bearer not-a-token' }), 401)
  readable('the same from another registered origin (no client named)', await call('GET', userinfo, { origin: OTHER_CLIENT_ORIGIN }), 401, OTHER_CLIENT_ORIGIN)
  const evil = await call('GET', userinfo, { origin: EVIL })
  t.equal(evil.status, 401)
  t.equal(evil.headers['access-control-allow-origin'], undefined, 'an origin no client has still reads nothing')
  readable('userinfo, a method not allowed', await call('PUT', userinfo, { origin: WEB_ORIGIN }), 405)

  const token = `${env.issuer}/token`
  readable('token, unknown client', await postForm(token, { grant_type: 'client_credentials' }, { authorization: basic('nobody', 'x'), origin: WEB_ORIGIN }), 401)
  readable('token, wrong secret of the client', await postForm(token, { grant_type: 'client_credentials' }, { authorization: basic('web-app', 'wrong'), origin: WEB_ORIGIN }), 401)
  readable('token, no grant type', await postForm(token, {}, { ...WEB_AUTH, origin: WEB_ORIGIN }), 400)
  readable('token, GET', await call('GET', token, { origin: WEB_ORIGIN }), 405)
  readable('token, JSON body', await call('POST', token, { origin: WEB_ORIGIN, 'content-type': 'application/json' }, '{}'), 415)
  readable('token, body over MAX_BODY', await postForm(token, { grant_type: 'client_credentials', pad: 'x'.repeat(2 * 1024 * 1024) }, { origin: WEB_ORIGIN }), 413)
  readable('introspect without a client', await postForm(`${env.issuer}/introspect`, { token: 'x' }, { origin: WEB_ORIGIN }), 401)
  readable('revoke, unknown client', await postForm(`${env.issuer}/revoke`, { token: 'x' }, { authorization: basic('nobody', 'x'), origin: WEB_ORIGIN }), 401)

  // Last in this server's tests: web-app's secret is then known (verified above), so guessing it shuts web-app out of nothing.
  const guesses = await Promise.all(Array.from({ length: 40 }, () =>
    postForm(token, { grant_type: 'client_credentials' }, { authorization: basic('web-app', 'guess'), 'x-forwarded-for': '192.0.2.77', origin: WEB_ORIGIN })))
  const limited = guesses.find((a) => a.status === 429)
  t.ok(limited, 'guesses past the budget are refused')
  if (limited !== undefined) readable('token, too many failed checks', limited, 429)

  const graphPath = `${new URL(env.issuer).origin}/graph/v1/demo/nodes/%ZZ`
  readable('a graph path that does not decode', await call('GET', graphPath, { origin: GRAPH_ORIGIN }), 400, GRAPH_ORIGIN)
})

t.test('a request during a shutdown: its 503 carries the CORS headers', async (t) => {
  const server = await startServer({ args: ['--cors-origins', GRAPH_ORIGIN, '--shutdown-timeout', '20s'] })
  t.teardown(async () => {
    await server.stop()
    removeDir(server.dataDir)
  })
  const bearer = await getToken(server.url)
  const port = Number(new URL(server.url).port)
  const opened = (): Promise<Socket> => new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s))
    s.on('error', reject)
  })
  // A kept-alive connection, open before the signal.
  const socket = await opened()
  let received = ''
  socket.on('data', (d: Buffer) => { received += d.toString('latin1') })
  socket.write('GET /errors HTTP/1.1\r\nHost: x\r\n\r\n')
  await until('the first answer', () => statuses(received).length === 1, 30_000)
  // An upload that never ends keeps the drain going; its head is in before the round trip after it.
  const upload = await opened()
  upload.on('error', () => undefined)
  await new Promise((r) => upload.write(`PUT /graph/v1/demo/nodes/core/customer/y HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`, r))
  t.equal((await call('GET', `${server.url}/health/live`)).status, 200)
  server.proc.kill('SIGTERM')
  // Draining once the listen socket is closed.
  const deadline = Date.now() + 30_000
  const accepts = (): Promise<boolean> => opened().then((probe) => { probe.destroy(); return true }, () => false)
  while (await accepts()) {
    if (Date.now() > deadline) throw new Error('the server still accepts connections after SIGTERM')
  }
  socket.write(`GET /graph/v1/demo/nodes/core/customer/x HTTP/1.1\r\nHost: x\r\nOrigin: ${GRAPH_ORIGIN}\r\nAuthorization: Bearer ${bearer}\r\n\r\n`)
  await until('the second answer', () => statuses(received).length === 2 && received.endsWith('}'), 30_000)
  const second = received.slice(received.lastIndexOf('HTTP/1.1 '))
  t.same(statuses(second), [503])
  t.match(second.toLowerCase(), `access-control-allow-origin: ${GRAPH_ORIGIN}`)
  t.match(second, /"type":"service_unavailable"/)
  socket.destroy()
  upload.destroy()
})
