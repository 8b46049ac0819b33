// Traces (OpenTelemetry) against an OTLP/HTTP receiver in this process
// (test/helpers/otlp-receiver.ts): the spans of a write (request, actor
// call, commit and its sync, across the actor's thread), a neighbours read,
// a token (its scrypt and signing tasks), a webhook delivery and a gateway
// call, each under the parent it should have; the caller's traceparent is
// the request span's parent and goes on to the webhook receiver and the
// gateway's service, and its trace id is the events' id when
// platform-context-trace-id is absent. With no OTEL_* variable nothing is
// sent (to OTLP's default address), and the trace id still names the
// request and its events.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { until } from '../../bench/wait'
import { createConsent, Graph } from '../helpers/client'
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver'
import { TRACE_VARIABLES } from '../../src/config/trace-options'
import { adminToken, basic, call, clientToken, codeFor, MANAGE, removeDir, startOAuthServer, tokenOk, VIEW, type Json, type OAuthServer } from '../helpers/oauth'

const SERVER = 2
const CLIENT = 3

/** A caller's span as a W3C traceparent, with its ids. */
function newParent(): { traceparent: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId }
}

/** What a test HTTP server (a webhook receiver, the gateway's service) was sent. */
interface Seen { url: string; headers: IncomingHttpHeaders; body: string }

async function recordingServer(seen: Seen[]): Promise<{ server: HttpServer; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seen.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const stopServer = async (server: HttpServer): Promise<void> => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
}

const receiver = new OtlpReceiver()
const hookSeen: Seen[] = []
const upstreamSeen: Seen[] = []
let hooks: { server: HttpServer; url: string }
let upstream: { server: HttpServer; url: string }
let server: OAuthServer
let graph: Graph

/** The environment that turns traces on, towards `to`. */
const tracing = (to: OtlpReceiver): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: to.url, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'profile-graph-test',
})

t.before(async () => {
  await receiver.start()
  hooks = await recordingServer(hookSeen)
  upstream = await recordingServer(upstreamSeen)
  server = await startOAuthServer({ env: { ...tracing(receiver), WEBHOOK_ALLOW: '127.0.0.1' } })
  const token = await clientToken(server.issuer, 'web-app', 'web-secret', `${VIEW} ${MANAGE}`)
  graph = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'subject-1'))
})
t.teardown(async () => {
  await server.stop()
  removeDir(server.dataDir)
  await Promise.all([receiver.stop(), stopServer(hooks.server), stopServer(upstream.server)])
})

const spanOf = (traceId: string, name: string | RegExp): Promise<ReceivedSpan> =>
  receiver.span((s) => s.traceId === traceId && (typeof name === 'string' ? s.name === name : name.test(s.name)), `span "${String(name)}" of trace ${traceId}`)

/** The span of the trace whose parent is `parent`, by name. */
const childOf = (parent: ReceivedSpan, name: string): Promise<ReceivedSpan> =>
  receiver.span((s) => s.parentSpanId === parent.spanId && s.name === name, `"${name}" under "${parent.name}"`)

t.test('a write: the request span under the caller\'s traceparent, its actor call, the commit in the actor\'s thread and its sync', async (t) => {
  const p = newParent()
  const res = await graph.put('nodes/core/customer/traced-1', { name: 'Traced' }, { traceparent: p.traceparent })
  t.ok(res.status === 201 || res.status === 204, `written (${res.status})`)
  t.equal(res.headers['x-request-id'], p.traceId, 'the request id is the trace id')
  const front = await spanOf(p.traceId, /^PUT /)
  t.equal(front.name, 'PUT /graph/v1/:tenant/nodes/:ns/:type/:id')
  t.equal(front.kind, SERVER)
  t.equal(front.parentSpanId, p.spanId, 'a child of the caller\'s span')
  t.match(front.attributes, { 'http.request.method': 'PUT', 'http.route': '/graph/v1/:tenant/nodes/:ns/:type/:id', 'http.response.status_code': res.status, 'thread.name': 'front' })
  t.equal(front.service, 'profile-graph-test', 'OTEL_SERVICE_NAME names the service')
  t.notOk(JSON.stringify(front.attributes).includes('traced-1'), 'no path in the attributes')
  const actorCall = await childOf(front, 'actor call')
  t.equal(actorCall.kind, CLIENT)
  t.match(actorCall.attributes, { 'profile_graph.operation': 'putNode', 'profile_graph.shard': Number, 'profile_graph.actor': Number })
  t.ok(Number(actorCall.attributes['profile_graph.batch_size']) >= 1, 'the batch it left in')
  const commit = await childOf(actorCall, 'commit')
  t.match(commit.attributes, { 'profile_graph.shard': actorCall.attributes['profile_graph.shard'], 'profile_graph.batch_size': Number, 'thread.name': /^shard actor/ })
  const sync = await childOf(commit, 'sync')
  t.equal(sync.traceId, p.traceId)
  const events = await graph.get('events?after=0&limit=1000')
  const event = events.json<{ events: { id: string; payload: Json }[] }>().events.find((e) => e.payload.id === 'traced-1')
  t.equal(event?.id, p.traceId, 'without platform-context-trace-id, the trace id is the events\' id')
  const named = newParent()
  await graph.put('nodes/core/customer/traced-2', {}, { traceparent: named.traceparent, 'platform-context-trace-id': 'business-42' })
  const again = (await graph.get('events?after=0&limit=1000')).json<{ events: { id: string; payload: Json }[] }>().events.find((e) => e.payload.id === 'traced-2')
  t.equal(again?.id, 'business-42', 'platform-context-trace-id wins')
})

t.test('a request without traceparent starts a trace of its own', async (t) => {
  const res = await graph.get('nodes/core/customer/traced-1')
  t.equal(res.status, 200)
  const requestId = res.headers['x-request-id']
  const front = await receiver.span((s) => s.name === 'GET /graph/v1/:tenant/nodes/:ns/:type/:id', 'the GET\'s span')
  t.equal(front.parentSpanId, '', 'a root span')
  t.not(front.traceId, requestId, 'the generated request id is not a trace id')
})

t.test('a neighbours read: the request span and its streamed actor call', async (t) => {
  const p = newParent()
  const res = await graph.get('neighbours/core/customer/traced-1', { traceparent: p.traceparent })
  t.equal(res.status, 200)
  const front = await spanOf(p.traceId, /^GET /)
  t.equal(front.name, 'GET /graph/v1/:tenant/neighbours/:ns/:type/:id')
  t.equal(front.parentSpanId, p.spanId)
  const actorCall = await childOf(front, 'actor call')
  t.match(actorCall.attributes, { 'profile_graph.operation': 'neighbours', 'profile_graph.shard': Number })
})

t.test('a bulk request: one request span, the actor calls of its lines under it', async (t) => {
  const p = newParent()
  const lines = ['bulk-1', 'bulk-2'].map((id) => `${JSON.stringify({ method: 'PUT', path: `nodes/core/customer/${id}`, headers: { 'consent-reference': graph.consent }, body: { name: id } })}\n`).join('')
  const res = await call('POST', graph.url('bulk'), { authorization: `Bearer ${graph.token}`, 'content-type': 'application/x-ndjson', traceparent: p.traceparent }, lines)
  t.equal(res.status, 200)
  const front = await spanOf(p.traceId, /^POST /)
  t.equal(front.name, 'POST /graph/v1/:tenant/bulk')
  const actorCall = await childOf(front, 'actor call')
  t.equal(actorCall.attributes['profile_graph.operation'], 'putNode')
  await childOf(actorCall, 'commit')
  await until('both lines\' actor calls', () => receiver.spans.filter((s) => s.parentSpanId === front.spanId && s.name === 'actor call').length === 2, 20_000)
})

t.test('a token: the code exchange\'s client secret check (scrypt) and ID token signing, in the piscina pools', async (t) => {
  const redirect = 'http://127.0.0.1:65530/other'
  const { code } = await codeFor(server.issuer, { client_id: 'other-app', redirect_uri: redirect, scope: `openid ${VIEW}` }, 'alice', 'alice-password')
  const p = newParent()
  const answer = await tokenOk(server.issuer, { grant_type: 'authorization_code', code, redirect_uri: redirect }, { authorization: basic('other-app', 'other-secret'), traceparent: p.traceparent })
  t.type(answer.id_token, 'string', 'an ID token was signed')
  const front = await spanOf(p.traceId, /^POST /)
  t.equal(front.name, 'POST /oauth2/v1/token')
  t.equal(front.parentSpanId, p.spanId)
  t.match((await childOf(front, 'scrypt verify')).attributes, { 'profile_graph.pool': 'scrypt' })
  t.match((await childOf(front, 'signing sign')).attributes, { 'profile_graph.pool': 'signing' })
})

t.test('a webhook delivery: a span of its own, whose traceparent the receiver gets', async (t) => {
  const created = await call('POST', graph.url('webhooks'), { authorization: `Bearer ${graph.token}`, 'content-type': 'application/json' }, JSON.stringify({ url: `${hooks.url}/hook` }))
  t.equal(created.status, 201)
  await graph.put('nodes/core/customer/hooked-1', { name: 'Hooked' })
  await until('the delivery of hooked-1', () => hookSeen.some((s) => s.body.includes('"hooked-1"')), 20_000)
  const delivered = hookSeen.find((s) => s.body.includes('"hooked-1"'))!
  const parent = /^00-([\da-f]{32})-([\da-f]{16})-01$/.exec(String(delivered.headers.traceparent))
  t.ok(parent, `a sampled traceparent (${String(delivered.headers.traceparent)})`)
  const span = await receiver.span((s) => s.spanId === parent![2], 'the delivery span')
  t.equal(span.name, 'webhook delivery')
  t.equal(span.traceId, parent![1])
  t.equal(span.kind, CLIENT)
  t.equal(span.parentSpanId, '', 'delivery runs apart from the request that caused the event')
  t.match(span.attributes, { 'http.request.method': 'POST', 'http.response.status_code': 200, 'profile_graph.tenant': 'demo', 'profile_graph.event.sequence': Number })
})

t.test('a gateway call: its upstream span, whose traceparent and trace id the service gets', async (t) => {
  const admin = { authorization: `Bearer ${await adminToken(server.issuer)}`, 'content-type': 'application/json' }
  const pkg = await call('PUT', `${server.issuer}/admin/packages/trace-pkg`, admin,
    JSON.stringify({ version: '1', provider: { id: 'demo', org: 'demo-org' }, includedServices: [{ id: 'svc', name: 'S', scopes: [VIEW], sourceUrl: `${upstream.url}/svc` }] }))
  t.equal(pkg.status, 201)
  const token = await clientToken(server.issuer, 'web-app', 'web-secret', VIEW)
  const p = newParent()
  const res = await call('GET', `${server.url}/gateway/trace-pkg/svc/echo`, { authorization: `Bearer ${token}`, traceparent: p.traceparent })
  t.equal(res.status, 200)
  const seen = upstreamSeen.find((s) => s.url === '/svc/echo')!
  const front = await spanOf(p.traceId, /^GET \/gateway/)
  t.equal(front.parentSpanId, p.spanId)
  const up = await childOf(front, 'gateway upstream')
  t.equal(up.kind, CLIENT)
  t.match(up.attributes, { 'profile_graph.gateway.service': 'trace-pkg/svc', 'http.response.status_code': 200 })
  t.equal(seen.headers.traceparent, `00-${p.traceId}-${up.spanId}-01`, 'the service\'s parent is the upstream span')
  t.equal(seen.headers['platform-context-trace-id'], p.traceId, 'and its trace id is the context trace id')
})

/** No OTEL_* variable, whatever this test's own environment has (empty is not set). */
const NO_TRACE_VARIABLES = Object.fromEntries(Object.keys(TRACE_VARIABLES).map((name) => [name, '']))

t.test('traces off by default: nothing reaches OTLP\'s default address; the trace id still names the request and its events', async (t) => {
  // The receiver listens where an exporter would send by default; were that port taken, the next best: an endpoint named and the SDK disabled.
  const quiet = new OtlpReceiver()
  const atDefault = await quiet.start(4318).then(() => true, async () => {
    await quiet.start()
    return false
  })
  const env = atDefault ? NO_TRACE_VARIABLES : { ...NO_TRACE_VARIABLES, ...tracing(quiet), OTEL_SDK_DISABLED: 'true' }
  t.comment(atDefault ? 'the receiver listens on 127.0.0.1:4318' : 'port 4318 is taken: the SDK disabled instead')
  const off = await startOAuthServer({ env })
  t.teardown(async () => {
    removeDir(off.dataDir)
    await quiet.stop()
  })
  const token = await clientToken(off.issuer, 'web-app', 'web-secret', `${VIEW} ${MANAGE}`)
  const g = new Graph(off.url, 'demo', token, await createConsent(off.url, 'demo', token, 'subject-1'))
  const p = newParent()
  const res = await g.put('nodes/core/customer/untraced', {}, { traceparent: p.traceparent })
  t.equal(res.headers['x-request-id'], p.traceId)
  const event = (await g.get('events?after=0&limit=1000')).json<{ events: { id: string; payload: Json }[] }>().events.find((e) => e.payload.id === 'untraced')
  t.equal(event?.id, p.traceId)
  // A clean stop exports whatever a thread still holds: after it, the count is final.
  await off.stop()
  t.equal(quiet.requests, 0, 'no export was sent')
})
