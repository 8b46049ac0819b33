// The gateway (spec 1.6) against a real upstream HTTP server of the test:
// only a token whose allowedServices name the service passes (the provider's
// own tenant, a subscribed tenant; not an unsubscribed one); identity goes
// in platform-* headers the client cannot forge; the source URL becomes the
// proxy URL in JSON, text and HTML bodies (URLs split across chunks), in
// location and link headers, never in other hosts' URLs, compressed or
// binary bodies; bodies stream both ways; a dead or slow service is 502/504;
// the graph service itself can sit behind the gateway.
import t from 'tap'
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync, gunzipSync } from 'node:zlib'
import { Agent, getGlobalDispatcher, request, setGlobalDispatcher } from 'undici'
import { adminToken, call, clientToken, oauthServerForFile, type Json } from '../helpers/oauth'
import type { Answer } from '../helpers/client'
import { rawExchange, statuses } from '../helpers/raw-http'
import { sleep } from '../../bench/wait'

const env = oauthServerForFile(t, { args: ['--gateway-timeout', '1s', '--gateway-max-concurrent', '2'] })
let upstream: HttpServer
let SOURCE: string
let admin: Record<string, string>
let demoToken: string
/** The paths the upstream was asked for, in order. */
const upstreamSeen: string[] = []
/** Requests to the upstream's /slow not yet answered. */
let slowInFlight = 0

const BIG_PIECES = 256
const pause = (): Promise<void> => sleep(5)

/** Writes `text` in pieces cut at the given character offsets. */
async function inPieces(res: ServerResponse, text: string, cuts: number[]): Promise<void> {
  let from = 0
  for (const cut of [...cuts, text.length]) {
    res.write(text.slice(from, cut))
    from = cut
    await pause()
  }
  res.end()
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  upstreamSeen.push(req.url!)
  const url = new URL(req.url!, 'http://x')
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const body = Buffer.concat(chunks)
  const path = url.pathname.replace(/^\/svc/, '')
  if (path === '/echo' || path.startsWith('/echo/')) {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ method: req.method, path: url.pathname, query: url.search, headers: req.headers, bodyLength: body.length }))
  } else if (path === '/json') {
    const doc = JSON.stringify({ self: `${SOURCE}/json?page=1#top`, next: `${SOURCE}/json?page=2`, other: 'http://elsewhere.example/svc/x', sameHost: `${SOURCE.replace('/svc', '/private')}/x` })
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
    const at = doc.indexOf(SOURCE)
    await inPieces(res, doc, [at + 3, at + 12, doc.indexOf(SOURCE, at + 1) + SOURCE.length - 1])
  } else if (path === '/text' || path === '/html' || path === '/binary') {
    const type = { '/text': 'text/plain', '/html': 'text/html', '/binary': 'application/octet-stream' }[path]
    const text = path === '/html' ? `<a href="${SOURCE}/page">x</a><a href="https://other.example/">y</a>` : `go to ${SOURCE}/a then ${SOURCE}`
    res.writeHead(200, { 'content-type': type })
    await inPieces(res, text, [10, 11, 20])
  } else if (path === '/gzip') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
    res.end(gzipSync(JSON.stringify({ self: `${SOURCE}/gzip` })))
  } else if (path === '/redirect') {
    res.writeHead(302, { location: `${SOURCE}/json?x=1`, link: `<${SOURCE}/p/2>; rel="next", <https://other.example/p>; rel="help"` })
    res.end()
  } else if (path === '/big') {
    // 64 KiB pieces, each with the source URL across its end: written as fast as the socket takes them.
    res.writeHead(200, { 'content-type': 'text/plain' })
    const piece = `${'x'.repeat(65536 - 21)} ${SOURCE}/p `
    for (let i = 0; i < BIG_PIECES; i++) {
      if (!res.write(piece)) await new Promise((resolve) => res.once('drain', resolve))
    }
    res.end()
  } else if (path === '/hop') {
    res.writeHead(200, { 'content-type': 'text/plain', connection: 'keep-alive, x-up-hop', 'x-up-hop': 'upstream secret', 'x-end': 'kept' })
    res.end('hop')
  } else if (path === '/slow') {
    slowInFlight++
    setTimeout(() => { slowInFlight--; if (!res.destroyed) res.end('late') }, 5000)
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no such thing')
  }
}

const putPackage = (id: string, services: Json[]): Promise<Answer> =>
  call('PUT', `${env.issuer}/admin/packages/${id}`, { ...admin, 'content-type': 'application/json' },
    JSON.stringify({ version: '1', provider: { id: 'demo', org: 'demo-org' }, includedServices: services }))

t.before(async () => {
  upstream = createServer((req, res) => void serve(req, res))
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  SOURCE = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/svc`
  admin = { authorization: `Bearer ${await adminToken(env.issuer)}` }
  const pkg = await putPackage('gw-pkg', [{ id: 'svc', name: 'A service', scopes: ['platform.profile_graph_view'], sourceUrl: SOURCE }])
  if (pkg.status !== 201) throw new Error(`PUT package: ${pkg.status} ${pkg.text}`)
  demoToken = await clientToken(env.issuer, 'web-app', 'web-secret', 'platform.profile_graph_view')
})
t.teardown(async () => {
  upstream.closeAllConnections()
  await new Promise((resolve) => upstream.close(resolve))
})

const proxy = (): string => `${env.server.url}/gateway/gw-pkg/svc`
const get = (path: string, token = demoToken, headers: Record<string, string> = {}) =>
  call('GET', `${proxy()}${path}`, { authorization: `Bearer ${token}`, ...headers })

t.test('the package shows the proxy URL of a service with a source URL', async (t) => {
  const pkg = (await call('GET', `${env.issuer}/admin/packages/gw-pkg`, admin)).json<{ includedServices: Json[] }>()
  t.same(pkg.includedServices[0], { id: 'svc', name: 'A service', scopes: ['platform.profile_graph_view'], sourceUrl: SOURCE, proxyUrl: proxy() })
  const bad = await putPackage('bad-pkg', [{ id: 's', name: 'S', scopes: [], sourceUrl: 'ftp://x/y' }])
  t.equal(bad.status, 400)
})

t.test('tokens: the provider tenant passes, an unsubscribed tenant is 403 until it subscribes; no token is 401', async (t) => {
  t.equal((await get('/echo')).status, 200, 'the provider\'s own tenant')
  t.equal((await call('GET', `${proxy()}/echo`)).status, 401)
  const acme = await clientToken(env.issuer, 'web-app', 'web-secret', 'platform.tenant=acme platform.profile_graph_view')
  const refused = await get('/echo', acme)
  t.equal(refused.status, 403)
  t.match(refused.json<Json>().message, /does not allow the service "svc"/)
  const sub = await call('POST', `${env.issuer}/admin/subscriptions`, { ...admin, 'content-type': 'application/json' }, JSON.stringify({ tenant: 'acme', package: 'gw-pkg' }))
  t.equal(sub.status, 201)
  const acmeAgain = await clientToken(env.issuer, 'web-app', 'web-secret', 'platform.tenant=acme platform.profile_graph_view')
  const passed = await get('/echo', acmeAgain)
  t.equal(passed.status, 200, 'a subscribed tenant')
  t.equal(passed.json<{ headers: Json }>().headers['platform-tenant'], 'acme')
  t.equal((await call('GET', `${env.server.url}/gateway/gw-pkg/nope/x`, { authorization: `Bearer ${demoToken}` })).status, 404)
})

t.test('identity headers replace what the client sent; Authorization is not forwarded; path and query kept', async (t) => {
  const res = await get('/echo/a%2Fb/c?x=1&y=%20', demoToken, { 'platform-tenant': 'forged', 'platform-user': 'forged', 'x-custom': 'kept' })
  const echo = res.json<{ path: string; query: string; headers: Record<string, string> }>()
  t.equal(echo.path, '/svc/echo/a%2Fb/c')
  t.equal(echo.query, '?x=1&y=%20')
  t.equal(echo.headers.authorization, undefined)
  t.equal(echo.headers['platform-tenant'], 'demo')
  t.equal(echo.headers['platform-client'], 'web-app')
  t.same(echo.headers['platform-scopes']!.split(' ').sort(), ['platform.profile_graph_view', 'platform.tenant=demo'])
  t.equal(echo.headers['platform-user'], undefined, 'no user signed in')
  t.match(echo.headers['platform-context-trace-id'], /^[0-9a-f]{16}$/)
  t.equal(echo.headers['x-custom'], 'kept')
})

t.test("the answer carries the gateway's request id; a browser's preflight goes to the service, not to the platform's CORS", async (t) => {
  const res = await get('/echo/x', demoToken, { 'platform-context-trace-id': 'gw-trace-1' })
  t.equal(res.status, 200)
  t.equal(res.headers['x-request-id'], 'gw-trace-1')
  const preflight = await call('OPTIONS', `${proxy()}/echo/x`, { authorization: `Bearer ${demoToken}`, origin: 'https://app.example', 'access-control-request-method': 'PUT' })
  t.equal(preflight.status, 200, 'forwarded to the service')
  t.equal(preflight.json<{ method: string }>().method, 'OPTIONS')
})

t.test('JSON split across chunks: the source URL is rewritten, other URLs are not', async (t) => {
  const res = await get('/json')
  t.equal(res.status, 200)
  t.same(res.json<Json>(), {
    self: `${proxy()}/json?page=1#top`, next: `${proxy()}/json?page=2`,
    other: 'http://elsewhere.example/svc/x', sameHost: `${SOURCE.replace('/svc', '/private')}/x`,
  })
})

t.test('text and HTML are rewritten; binary and compressed bodies pass untouched', async (t) => {
  t.equal((await get('/text')).text, `go to ${proxy()}/a then ${proxy()}`)
  t.equal((await get('/html')).text, `<a href="${proxy()}/page">x</a><a href="https://other.example/">y</a>`)
  t.equal((await get('/binary')).text, `go to ${SOURCE}/a then ${SOURCE}`)
  const gz = await request(`${proxy()}/gzip`, { headers: { authorization: `Bearer ${demoToken}` } })
  t.equal(gz.headers['content-encoding'], 'gzip')
  t.same(JSON.parse(gunzipSync(Buffer.from(await gz.body.arrayBuffer())).toString()), { self: `${SOURCE}/gzip` })
})

t.test('location and link headers are rewritten', async (t) => {
  const res = await get('/redirect')
  t.equal(res.status, 302)
  t.equal(res.headers.location, `${proxy()}/json?x=1`)
  t.equal(res.headers.link, `<${proxy()}/p/2>; rel="next", <https://other.example/p>; rel="help"`)
})

t.test('a large request body streams to the service', async (t) => {
  const big = Buffer.alloc(8 * 1024 * 1024, 'a')
  const res = await request(`${proxy()}/echo`, { method: 'POST', headers: { authorization: `Bearer ${demoToken}`, 'content-type': 'application/octet-stream' }, body: big })
  t.equal(res.statusCode, 200)
  t.equal(((await res.body.json()) as { bodyLength: number }).bodyLength, big.length)
})

t.test('a large response streams through the rewrite to a slow reader, whole', async (t) => {
  const res = await request(`${proxy()}/big`, { headers: { authorization: `Bearer ${demoToken}` }, highWaterMark: 16 * 1024 })
  let text = ''
  let reads = 0
  for await (const chunk of res.body) {
    text += (chunk as Buffer).toString('latin1')
    if (++reads % 64 === 0) await pause()
  }
  t.equal(res.statusCode, 200)
  t.equal(text.split(` ${proxy()}/p `).length - 1, BIG_PIECES, 'every URL rewritten')
  t.notOk(text.includes(SOURCE), 'none left')
  t.equal(text.length, BIG_PIECES * (65536 - 20 + proxy().length + 3), 'every byte')
  // The tests after this one open connections of their own: a kept-alive connection that carried these
  // large bodies was reset by the server when a later test reused it (ECONNRESET, seen twice in CI on a
  // loaded machine, in two different later tests; the server's cause is not pinned down).
  const used = getGlobalDispatcher()
  setGlobalDispatcher(new Agent())
  await used.close()
})

t.test('past GATEWAY_MAX_CONCURRENT requests to one service, the next is 503 with Retry-After', async (t) => {
  // On connections of their own, opened for this test: a kept-alive one from an earlier test reset a request that
  // reused it (seen once in CI, on a loaded machine: ECONNRESET).
  const fresh = new Agent()
  t.teardown(() => fresh.close())
  const freshGet = (path: string): Promise<{ status: number; headers: Record<string, unknown> }> =>
    request(`${proxy()}${path}`, { headers: { authorization: `Bearer ${demoToken}` }, dispatcher: fresh }).then(async (r) => {
      await r.body.dump()
      return { status: r.statusCode, headers: r.headers }
    })
  const slow = [freshGet('/slow'), freshGet('/slow')]
  // Both slots taken once both requests reached the service (a fixed wait was too short on a loaded machine).
  const deadline = Date.now() + 10_000
  while (slowInFlight < 2 && Date.now() < deadline) await sleep(20)
  t.equal(slowInFlight, 2, 'both slow requests reached the service')
  const third = await freshGet('/echo')
  t.equal(third.status, 503)
  t.equal(third.headers['retry-after'], '1')
  t.same((await Promise.all(slow)).map((r) => r.status), [504, 504])
  t.equal((await freshGet('/echo')).status, 200, 'the slots are given back')
})

t.test('a slow service is 504, a dead one 502, with the error body', async (t) => {
  const slow = await get('/slow')
  t.equal(slow.status, 504)
  t.equal(slow.json<Json>().type, 'gateway_timeout')
  t.equal((await putPackage('dead-pkg', [{ id: 'dead', name: 'Dead', scopes: ['platform.profile_graph_view'], sourceUrl: 'http://127.0.0.1:1' }])).status, 201)
  const dead = await call('GET', `${env.server.url}/gateway/dead-pkg/dead/x`, { authorization: `Bearer ${demoToken}` })
  t.equal(dead.status, 502)
  t.equal(dead.json<Json>().type, 'bad_gateway')
  t.equal(dead.json<Json>().message, 'the service "dead" could not be reached', 'no address, port or socket error for the client')
  t.notMatch(dead.json<Json>().message, /ECONN|127\.0\.0\.1/)
})

/** A GET sent as is (no client-side dot-segment resolution, like curl --path-as-is); the status and the text. */
async function rawGet(path: string, extraHeaders = ''): Promise<{ status: number | undefined; text: string }> {
  const { host } = new URL(env.server.url)
  const head = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${demoToken}\r\n${extraHeaders}Connection: close\r\n\r\n`
  const answer = await rawExchange(env.server.url, [head], 10_000)
  return { status: statuses(answer.text)[0], text: answer.text }
}

t.test('dot segments never climb out of the service\'s source path: 400 and nothing forwarded', async (t) => {
  for (const rest of ['../outside', '%2e%2e/outside', '%2E%2E/outside', 'x/%2E%2E/%2e%2e/%2e%2e/etc', '..;/outside', '%252e%252e/outside',
    '..%2Foutside', 'x%2F..%2F..%2Fetc', 'x%5C..%5C..%5Cetc', 'echo/../../outside']) {
    const before = upstreamSeen.length
    const res = await rawGet(`/gateway/gw-pkg/svc/${rest}`)
    t.equal(res.status, 400, rest)
    t.equal(upstreamSeen.length, before, `${rest}: the upstream saw nothing`)
  }
  const inside = await rawGet('/gateway/gw-pkg/svc/echo/x/../%2e%2E/echo/y/./z')
  t.equal(inside.status, 200, 'dot segments that stay inside are resolved')
  t.equal(upstreamSeen[upstreamSeen.length - 1], '/svc/echo/y/z')
})

t.test('hop-by-hop headers named in Connection are dropped both ways', async (t) => {
  const sent = await rawGet('/gateway/gw-pkg/svc/echo', 'X-Hop: secret\r\nX-Kept: yes\r\nConnection: keep-alive, X-Hop\r\n')
  t.equal(sent.status, 200)
  const echoed = JSON.parse(sent.text.slice(sent.text.indexOf('{'), sent.text.lastIndexOf('}') + 1)) as { headers: Record<string, string> }
  t.equal(echoed.headers['x-hop'], undefined, 'the header the client named in Connection')
  t.equal(echoed.headers['x-kept'], 'yes')
  const back = await get('/hop')
  t.equal(back.status, 200)
  t.equal(back.headers['x-up-hop'], undefined, 'the header the service named in Connection')
  t.equal(back.headers['x-end'], 'kept')
})

t.test('the graph service itself behind the gateway: its answer and its URLs come back through the proxy', async (t) => {
  t.equal((await putPackage('graph-pkg', [{ id: 'graph', name: 'Graph', scopes: ['platform.profile_graph_view'], sourceUrl: env.server.url }])).status, 201)
  const res = await call('GET', `${env.server.url}/gateway/graph-pkg/graph/graph/v1/demo/metamodel`, { authorization: `Bearer ${demoToken}` })
  // The gateway does not pass the token on: the graph answers 401, its moreInfo URL rewritten to the proxy.
  t.equal(res.status, 401)
  t.match(res.json<Json>().moreInfo, new RegExp(`^${env.server.url}/gateway/graph-pkg/graph/`))
})
