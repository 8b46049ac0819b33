// The metrics a dashboard needs, moved by real traffic against the compiled
// server and read through the strict exposition parser: build info, free
// bytes of the data directory, consents and destroyed data keys, OAuth
// errors and lock-out refusals, the scrypt and signing pools, webhook
// deliveries by outcome, gateway upstream latency and the last backup.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { call, createConsent, Graph } from '../helpers/client'
import { adminToken, basic, clientToken, MANAGE, oauthServerForFile, postForm, redirectParams, UserAgent, VIEW } from '../helpers/oauth'
import { parsePrometheusText, total, type Family } from '../helpers/prometheus-text'
import { removeDir, ROOT, tempDir } from '../helpers/server'
import { sleep } from '../../bench/wait'

const env = oauthServerForFile(t, { env: { WEBHOOK_ALLOW: '127.0.0.1', WEBHOOK_RETRY_BASE_MS: '50' } })
const json = { 'content-type': 'application/json' }

async function scrape(): Promise<Map<string, Family>> {
  const res = await call('GET', `${env.server.url}/metrics`)
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${res.text}`)
  return parsePrometheusText(res.text)
}

/** Scrapes until `ok` holds (the actors report once a second; deliveries retry), at most ~15 s. */
async function scrapeUntil(ok: (f: Map<string, Family>) => boolean): Promise<Map<string, Family>> {
  for (let i = 0; ; i++) {
    const f = await scrape()
    if (ok(f) || i >= 60) return f
    await sleep(250)
  }
}

/** `after` minus `before` of one series (or the sum of those matching `labels`). */
const movedBy = (before: Map<string, Family>, after: Map<string, Family>) => (name: string, labels: Record<string, string> = {}): number =>
  total(after, name, labels) - total(before, name, labels)

/** An HTTP server of the test answering every request with `status()`. */
async function listen(status: () => number): Promise<{ url: string; server: HttpServer }> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(status(), { 'content-type': 'text/plain' }).end('ok'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

const close = (server: HttpServer): Promise<void> => {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

t.test('build_info and the data directory\'s free bytes', async (t) => {
  const f = await scrape()
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
  const [info] = f.get('build_info')!.samples
  t.equal(info?.value, 1)
  t.equal(info?.labels.version, version)
  t.equal(info?.labels.node, process.version, 'the server runs on the Node of the tests')
  t.match(info?.labels.commit, /^([0-9a-f]{7,40}|unknown)$/)
  t.ok(total(f, 'data_dir_free_bytes') > 0, 'free bytes of the data directory')
})

t.test('consents created and revoked, data keys destroyed', async (t) => {
  const before = await scrape()
  const token = await clientToken(env.issuer, 'web-app', 'web-secret', MANAGE)
  const kept = await createConsent(env.server.url, 'demo', token, 'dash-1')
  const revoked = await createConsent(env.server.url, 'demo', token, 'dash-2')
  t.ok(kept !== revoked)
  const del = await call('DELETE', `${env.server.url}/graph/v1/demo/consents/${revoked}`, { authorization: `Bearer ${token}` })
  t.equal(del.status, 204)
  const after = await scrapeUntil((f) => movedBy(before, f)('graph_data_keys_destroyed_total') >= 1)
  const moved = movedBy(before, after)
  t.equal(moved('graph_consents_created_total'), 2)
  t.equal(moved('graph_consents_revoked_total'), 1)
  t.equal(moved('graph_data_keys_destroyed_total'), 1, 'the revoked consent\'s key, reported by its actor')
  t.ok(after.get('graph_data_keys_destroyed_total')!.samples.every((s) => /^\d+$/.test(s.labels.shard!)), 'by shard')
})

t.test('OAuth errors by error value, a lock-out refusal, the scrypt and signing pools', async (t) => {
  const before = await scrape()
  const legacy = { authorization: basic('legacy-app', 'legacy-secret') }
  const wrongPassword = () => postForm(`${env.issuer}/token`, { grant_type: 'password', username: 'bob', password: 'not-bobs' }, legacy)
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'client_credentials' }, { authorization: basic('web-app', 'wrong') })).status, 401)
  t.equal((await postForm(`${env.issuer}/token`, { grant_type: 'made-up' }, legacy)).status, 400)
  // The lock-out starts at the 15th failure; the 16th attempt is refused before any check.
  for (let i = 0; i < 15; i++) t.equal((await wrongPassword()).status, 400)
  const refused = await wrongPassword()
  t.equal(refused.json<{ type: string }>().type, 'too_many_attempts')
  const ua = new UserAgent(env.issuer)
  const redirected = await ua.open({ client_id: 'web-app', response_type: 'code', prompt: 'none' })
  t.equal(redirectParams(redirected.headers.location as string).query.get('error'), 'login_required', 'an error sent back to the client')
  const page = await ua.open({ client_id: 'web-app', response_type: 'code', redirect_uri: 'https://evil.example/' })
  t.equal(page.status, 400, 'an error page')
  const admin = await adminToken(env.issuer)
  t.equal((await call('POST', `${env.issuer}/admin/signing-keys`, { authorization: `Bearer ${admin}` })).status, 201, 'a key made in the signing pool')

  const after = await scrape()
  const moved = movedBy(before, after)
  t.equal(moved('oauth_errors_total', { error: 'invalid_client' }), 1)
  t.equal(moved('oauth_errors_total', { error: 'unsupported_grant_type' }), 1)
  t.equal(moved('oauth_errors_total', { error: 'invalid_grant' }), 16, 'fifteen wrong passwords and the refusal')
  t.equal(moved('oauth_errors_total', { error: 'login_required' }), 1, 'the redirect')
  t.equal(moved('oauth_errors_total', { error: 'invalid_request' }), 1, 'the error page')
  t.equal(moved('auth_attempts_refused_total', { limit: 'lockout' }), 1)
  t.ok(moved('worker_pool_wait_seconds_count', { pool: 'scrypt' }) >= 15, 'each password check waited for a thread (if only briefly)')
  t.ok(moved('worker_pool_wait_seconds_count', { pool: 'signing' }) >= 1)
  t.equal(total(after, 'worker_pool_queued_tasks', { pool: 'scrypt' }), 0, 'nothing waits now')
  t.equal(total(after, 'worker_pool_queued_tasks', { pool: 'signing' }), 0)
  t.ok(after.get('oauth_errors_total')!.samples.every((s) => s.labels.error !== undefined && !s.labels.error.includes('bob')))
})

t.test('webhook deliveries by outcome', async (t) => {
  let answers = 0
  const receiver = await listen(() => (++answers === 1 ? 503 : 200))
  t.teardown(() => close(receiver.server))
  // A port nothing listens on: a server opened and closed again.
  const gone = await listen(() => 200)
  await close(gone.server)
  const token = await clientToken(env.issuer, 'web-app', 'web-secret', MANAGE)
  const g = new Graph(env.server.url, 'demo', token, await createConsent(env.server.url, 'demo', token, 'dash-hooks'))
  const before = await scrape()
  const hooks: string[] = []
  for (const url of [`${receiver.url}/hook`, `${gone.url}/hook`]) {
    const made = await call('POST', g.url('webhooks'), { authorization: `Bearer ${token}`, ...json }, JSON.stringify({ url }))
    t.equal(made.status, 201)
    hooks.push(made.json<{ id: string }>().id)
  }
  t.teardown(async () => { for (const id of hooks) await g.delete(`webhooks/${id}`) })
  t.equal((await g.put('nodes/core/customer/dash-hook', { name: 'H' })).status, 204)
  const after = await scrapeUntil((f) => movedBy(before, f)('webhook_deliveries_total', { outcome: 'delivered' }) >= 1 && movedBy(before, f)('webhook_deliveries_total', { outcome: 'unreachable' }) >= 1)
  const moved = movedBy(before, after)
  t.ok(moved('webhook_deliveries_total', { outcome: 'rejected' }) >= 1, 'the 503, retried')
  t.ok(moved('webhook_deliveries_total', { outcome: 'delivered' }) >= 1, 'then delivered')
  t.ok(moved('webhook_deliveries_total', { outcome: 'unreachable' }) >= 1, 'no answer at all')
  t.same(new Set(after.get('webhook_deliveries_total')!.samples.map((s) => s.labels.outcome)), new Set(['delivered', 'rejected', 'unreachable']))
})

t.test('gateway upstream latency by configured service', async (t) => {
  const upstream = await listen(() => 200)
  t.teardown(() => close(upstream.server))
  const admin = { authorization: `Bearer ${await adminToken(env.issuer)}`, ...json }
  const pkg = await call('PUT', `${env.issuer}/admin/packages/dash-pkg`, admin,
    JSON.stringify({ version: '1', provider: { id: 'demo', org: 'demo-org' }, includedServices: [{ id: 'svc', name: 'S', scopes: [VIEW], sourceUrl: `${upstream.url}/svc` }] }))
  t.equal(pkg.status, 201)
  const token = await clientToken(env.issuer, 'web-app', 'web-secret', VIEW)
  const before = await scrape()
  for (let i = 0; i < 3; i++) t.equal((await call('GET', `${env.server.url}/gateway/dash-pkg/svc/x/${i}?q=${i}`, { authorization: `Bearer ${token}` })).status, 200)
  t.equal((await call('GET', `${env.server.url}/gateway/dash-pkg/nope/x`, { authorization: `Bearer ${token}` })).status, 404, 'no such service: not forwarded')
  const after = await scrape()
  t.equal(movedBy(before, after)('gateway_upstream_duration_seconds_count', { service: 'dash-pkg/svc' }), 3)
  t.same(new Set(after.get('gateway_upstream_duration_seconds')!.samples.map((s) => s.labels.service)), new Set(['dash-pkg/svc']), 'only the configured service is a label')
})

t.test('the last backup\'s time', async (t) => {
  const copies = tempDir('dash-backup-')
  t.teardown(() => removeDir(copies))
  t.equal(total(await scrape(), 'backup_last_success_timestamp_seconds'), 0, 'none yet')
  const admin = await adminToken(env.issuer)
  const asked = Date.now() / 1000
  const made = await call('POST', `${env.issuer}/admin/backups`, { authorization: `Bearer ${admin}`, ...json }, JSON.stringify({ to: join(copies, 'b') }))
  t.equal(made.status, 201)
  const at = total(await scrape(), 'backup_last_success_timestamp_seconds')
  t.ok(at >= asked - 1 && at <= Date.now() / 1000 + 1, `when it began (${at})`)
  t.equal(at, Date.parse(made.json<{ taken: string }>().taken) / 1000, 'the time the answer names')
})
