// The server log: stdout keeps the plain start lines,
// stderr is JSON lines; one access line per request with its route
// template and request id (the caller's trace id when given, echoed as
// x-request-id); audit lines for admin changes, consents, sign-ins,
// lock-outs and failed client authentications naming who; and not one of the secrets a full flow used.
import t from 'tap'
import { call, createConsent, Graph } from '../helpers/client'
import { adminToken, basic, clientToken, codeFor, postForm, startOAuthServer, UserAgent, WEB_AUTH, type Json, type OAuthServer } from '../helpers/oauth'
import { removeDir } from '../helpers/server'

type Line = Record<string, unknown>

const CALLBACK = 'http://127.0.0.1:65530/callback'
const PLAIN_START_LINE = /^(listening \S+|public url \S+|client \S+ \(tenant \S+\), secret \S+|get a token: .*)$/

let server: OAuthServer
t.before(async () => { server = await startOAuthServer() })
t.teardown(async () => { if (server.proc.exitCode === null) await server.stop(); removeDir(server.dataDir) })

/** Every secret the flow below handles: none may reach the log. */
const secrets = new Set<string>(['web-secret', 'admin-secret', 'alice-password', 'not-bobs-password', 'wrong-password', 'legacy-secret'])
const requestIds: Record<string, string> = {}
/** Remembers a secret the flow was given (a field some answers leave out is skipped). */
const keep = (v: unknown): void => { if (typeof v === 'string' && v !== '') secrets.add(v) }

t.test('a full flow: code flow with refresh, sign-in failures, a lock-out, admin changes, consents', async (t) => {
  const issuer = server.issuer
  const { code } = await codeFor(issuer, { client_id: 'web-app', redirect_uri: CALLBACK, scope: 'openid platform.profile_graph_view' }, 'alice', 'alice-password')
  keep(code)
  const tokens = await postForm(`${issuer}/token`, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, WEB_AUTH)
  t.equal(tokens.status, 200)
  const body = tokens.json<Json>()
  for (const k of ['access_token', 'refresh_token', 'id_token']) keep(body[k])
  const refreshed = await postForm(`${issuer}/token`, { grant_type: 'refresh_token', refresh_token: body.refresh_token as string }, WEB_AUTH)
  t.equal(refreshed.status, 200)
  keep(refreshed.json<Json>().access_token)
  keep(refreshed.json<Json>().refresh_token)

  const agent = new UserAgent(issuer)
  const page = await agent.open({ response_type: 'code', client_id: 'web-app', redirect_uri: CALLBACK, scope: 'openid' })
  t.equal((await agent.submit(page, 'bob', 'not-bobs-password')).status, 401, 'a failed sign-in on the form')
  for (const v of agent.cookies.values()) keep(v)
  const failures = await Promise.all(Array.from({ length: 15 }, () => postForm(`${issuer}/token`, { grant_type: 'password', username: 'locked1', password: 'wrong-password' })))
  t.same(failures.map((f) => f.status), failures.map(() => 400), 'fifteen failures start a lock-out')

  // Failed client authentications: a wrong secret at /token, unknown clients at /introspect and /revoke, a confidential client without its secret.
  t.equal((await postForm(`${issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('web-app', 'wrong-client-secret') })).status, 401)
  t.equal((await postForm(`${issuer}/introspect`, { token: 'whatever' }, { authorization: basic('ghost-client', 'ghost-secret') })).status, 401)
  t.equal((await postForm(`${issuer}/revoke`, { token: 'whatever', client_id: 'ghost-client', client_secret: 'ghost-secret' })).status, 401)
  t.equal((await postForm(`${issuer}/token`, { grant_type: 'client_credentials', client_id: 'web-app' })).status, 401)
  secrets.add('wrong-client-secret')
  secrets.add('ghost-secret')

  const admin = await adminToken(issuer)
  keep(admin)
  const created = await call('POST', `${issuer}/admin/clients`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    JSON.stringify({ client_id: 'audited', tenant: 'demo', redirect_uris: [], scopes: ['platform.profile_graph_view'], grant_types: ['client_credentials'] }))
  t.equal(created.status, 201)
  keep(created.json<Json>().client_secret)
  const rotated = await call('POST', `${issuer}/admin/clients/audited/secret`, { authorization: `Bearer ${admin}` })
  t.equal(rotated.status, 200)
  keep(rotated.json<Json>().client_secret)

  const manage = await clientToken(issuer, 'web-app', 'web-secret')
  keep(manage)
  const consent = await createConsent(server.url, 'demo', manage, 'audited-subject')
  keep(consent)
  const g = new Graph(server.url, 'demo', manage, consent)
  const traced = await g.put('nodes/core/customer/l1', { name: 'L' }, { 'platform-context-trace-id': 'trace-put-l1' })
  t.equal(traced.status, 204)
  t.equal(traced.headers['x-request-id'], 'trace-put-l1', 'the trace id is the request id')
  const parent = await call('GET', `${server.url}/health/live`, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' })
  t.equal(parent.headers['x-request-id'], '4bf92f3577b34da6a3ce929d0e0e4736', "traceparent's trace id")
  const revoked = await call('DELETE', g.url(`consents/${encodeURIComponent(consent)}`), { authorization: `Bearer ${manage}` })
  t.equal(revoked.status, 204)
  requestIds.revoke = revoked.headers['x-request-id'] as string
  t.match(requestIds.revoke, /^[0-9a-f-]{36}$/, 'a generated request id without a trace id')
  t.equal((await call('GET', `${issuer}/userinfo`, { authorization: `Bearer ${body.access_token as string}`, cookie: 'platform_session=cookie-secret-value' })).status, 200)
  secrets.add('cookie-secret-value')
  await server.stop()
})

t.test('what the log holds', async (t) => {
  const lines = server.output().split('\n').filter((l) => l !== '')
  const json: Line[] = []
  for (const l of lines) {
    if (l.startsWith('{')) json.push(JSON.parse(l) as Line)
    else t.match(l, PLAIN_START_LINE, 'a plain line is a start line')
  }
  const access = json.filter((l) => l.msg === 'request')
  t.ok(access.length >= 30, 'access lines')
  for (const a of access) t.match(a, { requestId: String, method: String, route: String, status: Number, ms: Number }, 'an access line names route, status, duration and request id')
  t.notOk(access.some((a) => String(a.route).includes('audited-subject') || String(a.route).includes('/consents/cr')), 'route templates, not paths')
  t.equal(access.filter((a) => a.requestId === 'trace-put-l1').length, 1, 'one access line per request')
  t.match(access.find((a) => a.requestId === 'trace-put-l1'), { route: '/graph/v1/:tenant/nodes/:ns/:type/:id', method: 'PUT', status: 204 })
  t.equal(access.filter((a) => a.requestId === '4bf92f3577b34da6a3ce929d0e0e4736').length, 1)

  const audits = json.filter((l) => typeof l.audit === 'string')
  const one = (action: string): Line | undefined => audits.find((a) => a.audit === action)
  t.match(one('admin.clients.create'), { client: 'platform-admin', ids: undefined })
  t.match(one('admin.clients.secret.rotate'), { client: 'platform-admin', ids: ['audited'] })
  t.match(one('consent.create'), { client: 'web-app', tenant: 'demo', consentSubject: 'audited-subject' })
  t.match(one('consent.revoke'), { client: 'web-app', tenant: 'demo', requestId: requestIds.revoke })
  t.match(one('sign_in.success'), { subject: String, source: String })
  t.match(one('sign_in.failure'), { subject: String, reason: 'invalid' })
  t.ok(one('sign_in.lockout'), 'the lock-out start')
  const clientFailures = audits.filter((a) => a.audit === 'client_auth.failure')
  t.match(clientFailures, [
    { level: 30, client: 'web-app', reason: 'wrong_secret', source: String, unknownClient: undefined, msg: 'audit client_auth.failure' },
    { client: 'ghost-client', reason: 'unknown_client', unknownClient: true, source: String },
    { client: 'ghost-client', reason: 'unknown_client', unknownClient: true },
    { client: 'web-app', reason: 'no_secret' },
  ], 'failed client authentications, in order, naming the client presented, why and from where')

  const text = server.output()
  for (const secret of secrets) t.notOk(text.includes(secret), `the log does not hold the secret ${secret.slice(0, 6)}...`)
})
