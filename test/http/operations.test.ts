// Health and metrics for operators: the probes
// answer without a token, GET /metrics is Prometheus text a strict parser
// accepts, the named series move with the traffic that should move them,
// and --metrics decides who may read it.
import t from 'tap'
import { WebSocket } from 'undici'
import { call, createConsent, Graph } from '../helpers/client'
import { adminToken, basic, clientToken, oauthServerForFile, postForm, startOAuthServer, type Json } from '../helpers/oauth'
import { parsePrometheusText, total, type Family } from '../helpers/prometheus-text'
import { removeDir } from '../helpers/server'
import { sleep } from '../../bench/wait'

const env = oauthServerForFile(t)

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Map<string, Family>> {
  const res = await call('GET', `${url}/metrics`, headers)
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${res.text}`)
  if (!String(res.headers['content-type']).startsWith('text/plain; version=0.0.4')) throw new Error(`content type ${String(res.headers['content-type'])}`)
  return parsePrometheusText(res.text)
}

/** Scrapes until `ok` holds (the actors report once a second), at most ~10 s. */
async function scrapeUntil(url: string, ok: (f: Map<string, Family>) => boolean): Promise<Map<string, Family>> {
  for (let i = 0; ; i++) {
    const f = await scrape(url)
    if (ok(f) || i >= 40) return f
    await sleep(250)
  }
}

t.test('the probes answer without a token', async (t) => {
  const live = await call('GET', `${env.server.url}/health/live`)
  t.equal(live.status, 200)
  t.same(live.json(), { status: 'live' })
  const ready = await call('GET', `${env.server.url}/health/ready`)
  t.equal(ready.status, 200)
  t.same(ready.json(), { status: 'ready', checks: { actors: 'ok', bootstrap: 'ok', authStore: 'ok', shutdown: 'ok', dataDir: 'ok' } })
  t.equal((await call('HEAD', `${env.server.url}/health/ready`)).status, 200)
  const post = await call('POST', `${env.server.url}/health/live`)
  t.equal(post.status, 405)
  t.equal(post.headers.allow, 'GET, HEAD')
})

t.test('/metrics is Prometheus text and its series move with the traffic', async (t) => {
  const url = env.server.url
  const before = await scrape(url)
  for (const name of ['process_cpu_user_seconds_total', 'nodejs_heap_size_used_bytes', 'shard_actor_queue_depth', 'sign_in_lockouts_active', 'event_streams_open']) {
    t.ok([...before.values()].some((f) => f.samples.some((s) => s.name === name)), `${name} is served`)
  }

  const token = await clientToken(env.issuer, 'web-app', 'web-secret')
  const consent = await createConsent(url, 'demo', token, 'metrics-subject')
  const g = new Graph(url, 'demo', token, consent)
  for (let i = 0; i < 3; i++) t.equal((await g.put(`nodes/core/customer/m${i}`, { name: 'M' })).status, 204)
  const wrong = await postForm(`${env.issuer}/token`, { grant_type: 'password', username: 'carol', password: 'not-carols' }, { authorization: basic('legacy-app', 'legacy-secret') })
  t.equal(wrong.status, 400)
  const ws = new WebSocket(`${url.replace('http', 'ws')}/graph/v1/demo/events/stream`, { headers: { authorization: `Bearer ${token}` } })
  await new Promise((resolve, reject) => { ws.addEventListener('open', resolve); ws.addEventListener('error', reject) })

  const after = await scrapeUntil(url, (f) => total(f, 'graph_events_appended_total') - total(before, 'graph_events_appended_total') >= 3 && total(f, 'event_streams_open') === 1)
  const moved = (name: string, labels: Record<string, string> = {}): number => total(after, name, labels) - total(before, name, labels)
  t.ok(moved('oauth_tokens_issued_total', { grant_type: 'client_credentials' }) >= 1, 'tokens issued by grant type')
  t.equal(moved('http_requests_total', { route: '/graph/v1/:tenant/nodes/:ns/:type/:id', method: 'PUT', status: '204' }), 3, 'requests by route template, method and status')
  t.equal(moved('http_request_duration_seconds_count', { route: '/graph/v1/:tenant/nodes/:ns/:type/:id', method: 'PUT', status: '204' }), 3, 'and their latency')
  t.ok(moved('shard_commit_batch_size_count') >= 4, 'group commits counted (a consent and three nodes)')
  t.ok(moved('shard_commit_seconds_count') >= 4 && moved('shard_flush_seconds_count') >= 4, 'commit and flush latency')
  t.ok(moved('graph_events_appended_total') >= 3, 'events appended')
  t.ok(moved('shard_journal_syncs_total') >= 1, 'journal fdatasyncs')
  t.ok(moved('shard_journal_bytes_total') >= 3 * 16, 'journal bytes appended')
  t.ok(total(after, 'shard_lmdb_syncs_total') >= 1, 'LMDB syncs (the one at open, then checkpoints)')
  t.ok(total(after, 'shard_lmdb_map_used_bytes') > 0 && total(after, 'shard_lmdb_map_size_bytes') >= total(after, 'shard_lmdb_map_used_bytes'), 'LMDB map use per shard')
  t.equal(moved('sign_in_failures_total'), 1, 'a failed sign-in')
  t.equal(total(after, 'event_streams_open'), 1, 'the open stream')
  ws.close()
})

t.test('--metrics off hides it; --metrics token wants scope platform.metrics', async (t) => {
  const off = await startOAuthServer({ args: ['--metrics', 'off'] })
  t.teardown(async () => { await off.stop(); removeDir(off.dataDir) })
  t.equal((await call('GET', `${off.url}/metrics`)).status, 404)
  t.equal((await call('GET', `${off.url}/health/ready`)).status, 200, 'the probes stay')

  const guarded = await startOAuthServer({ args: ['--metrics', 'token'] })
  t.teardown(async () => { await guarded.stop(); removeDir(guarded.dataDir) })
  t.equal((await call('GET', `${guarded.url}/metrics`)).status, 401)
  const admin = await adminToken(guarded.issuer)
  t.equal((await call('GET', `${guarded.url}/metrics`, { authorization: `Bearer ${admin}` })).status, 403, 'another scope is not enough')
  const created = await call('POST', `${guarded.issuer}/admin/clients`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    JSON.stringify({ client_id: 'scraper', tenant: 'platform', redirect_uris: [], scopes: ['platform.metrics'], grant_types: ['client_credentials'] }))
  t.equal(created.status, 201, 'a client with scope platform.metrics')
  const scraper = await clientToken(guarded.issuer, 'scraper', created.json<Json>().client_secret as string)
  t.ok((await scrape(guarded.url, { authorization: `Bearer ${scraper}` })).size > 10)
})
