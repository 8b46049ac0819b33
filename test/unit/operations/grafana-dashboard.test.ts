// docs/manual/grafana-dashboard.json asks only for series the server has:
// every metric name in its PromQL (panel queries and template variables) is
// registered, a histogram's only through _bucket, _sum or _count, and every
// metric the dashboard needs beyond the requests is on it.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AuthStore } from '../../../src/auth/models/auth-store'
import type { ActorPool } from '../../../src/shards/actor-pool'
import { registerSources } from '../../../src/operations/sources'
import { registry } from '../../../src/telemetry/metrics'
import '../../../src/telemetry/pool-metrics'

const DASHBOARD = join(__dirname, '..', '..', '..', 'docs', 'manual', 'grafana-dashboard.json')

/** Words of PromQL that are not metric names. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan'])

/** The metric names a PromQL expression reads. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings (label values, regexes)
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
  const names: string[] = []
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const rest = bare.slice(m.index + m[0].length)
    if (/^\s*\(/.test(rest)) continue // a function
    if (KEYWORDS.has(m[0].toLowerCase())) continue
    if (/^\d/.test(bare.slice(m.index - 1, m.index))) continue // the unit of a number such as 5m
    names.push(m[0])
  }
  return names
}

interface Panel { title?: string; targets?: { expr?: string }[]; panels?: Panel[] }
interface Dashboard { panels: Panel[]; templating: { list: { query?: unknown; definition?: string }[] } }

function expressions(d: Dashboard): string[] {
  const out: string[] = []
  const walk = (panels: Panel[]): void => {
    for (const p of panels) {
      for (const target of p.targets ?? []) if (target.expr !== undefined) out.push(target.expr)
      walk(p.panels ?? [])
    }
  }
  walk(d.panels)
  for (const v of d.templating.list) {
    // label_values(metric, label): the metric is its first argument.
    const query = typeof v.query === 'object' && v.query !== null ? (v.query as { query?: string }).query : undefined
    for (const q of [query, v.definition]) {
      const m = q === undefined ? null : /^label_values\(\s*([^,)]+)/.exec(q)
      if (m !== null) out.push(m[1]!)
    }
  }
  return out
}

/** Every series name the registry serves: a histogram as its three, anything else as itself. */
function servedNames(): Map<string, string> {
  const served = new Map<string, string>()
  for (const metric of registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string }
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) served.set(`${name}${suffix}`, name)
    else served.set(name, name)
  }
  return served
}

t.test('the expression parser finds metric names, not functions, labels or units', async (t) => {
  t.same(metricNames('histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{instance=~"$instance",route="/x"}[5m])))'), ['http_request_duration_seconds_bucket'])
  t.same(metricNames('time() - max(backup_last_success_timestamp_seconds{a="b"} > 0)'), ['backup_last_success_timestamp_seconds'])
  t.same(metricNames('sum(rate(a_total[5m])) / on (instance) group_left sum(b)'), ['a_total', 'b'])
})

t.test('every metric the dashboard queries is registered', async (t) => {
  // The scrape-time sources too; their collect functions are not called here.
  registerSources({} as ActorPool, {} as AuthStore, tmpdir())
  const served = servedNames()
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard
  const exprs = expressions(dashboard)
  t.ok(exprs.length >= 30, `${exprs.length} expressions`)
  const used = new Set(exprs.flatMap(metricNames))
  for (const name of used) t.ok(served.has(name), `${name} is served`)
  const families = new Set([...used].map((n) => served.get(n)))
  for (const name of [
    'build_info', 'shard_actor_exits_total', 'graph_consents_created_total', 'graph_consents_revoked_total', 'graph_data_keys_destroyed_total',
    'webhook_deliveries_total', 'oauth_errors_total', 'auth_attempts_refused_total', 'worker_pool_queued_tasks', 'worker_pool_wait_seconds',
    'backup_last_success_timestamp_seconds', 'data_dir_free_bytes', 'gateway_upstream_duration_seconds',
    'http_requests_total', 'http_request_duration_seconds', 'shard_commit_batch_size', 'shard_journal_syncs_total', 'cluster_owned_shards', 'cluster_forwarded_requests_total',
  ]) t.ok(families.has(name), `the dashboard shows ${name}`)
})
