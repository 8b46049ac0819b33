// The Prometheus metrics (prom-client), served at GET /metrics
// (src/operations/endpoints.ts). The layers push into these; gauges read at
// scrape time are registered by src/operations/sources.ts.
import { Counter, Gauge, Histogram, Registry, type LabelValues } from 'prom-client'
import { droppedLogLines } from './log'

export const registry = new Registry()

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

type RouteLabel = 'route' | 'method' | 'status'
const ROUTE_LABELS: RouteLabel[] = ['route', 'method', 'status']

/**
 * One route template, method and status: counted in plain numbers on the
 * request path, handed to prom-client only when /metrics is scraped.
 * prom-client's own labelled `inc` and `observe` hash the labels and look
 * the bucket up by its bound's string on every call (~1.5 µs per request,
 * bench/MEASUREMENTS.md, "Table: 2026-11-23, full settings, quiet machine,
 * three runs", "The access log's cost").
 */
interface RequestCell {
  labels: Record<RouteLabel, string>
  count: number
  sum: number
  /** Observations per bucket of LATENCY_BUCKETS (not cumulative); the last slot is above every bound. */
  buckets: Float64Array
}

/** route -> method -> status label -> cell: lookups by strings the router already holds, no key built per request. */
const cells = new Map<string, Map<string, Map<string, RequestCell>>>()

// Every label value comes from a fixed set, so that a scrape stays small
// whatever clients send: the route is a template or `unmatched` (set by the
// router), the method one of KNOWN_METHODS or `OTHER`, the status one of
// KNOWN_STATUSES or its class.

/** The methods counted by name; any other a client sends is counted as `OTHER`. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'])

/** The statuses this server answers with, counted by code; any other (a service behind the gateway may answer anything) by its class, `4xx`. */
const KNOWN_STATUSES = new Set([101, 200, 201, 204, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405, 409, 410, 413, 415, 429, 499, 500, 502, 503, 504, 507])

const statusLabels: string[] = []
/** Made once per status: the request path builds no string. */
const statusLabel = (status: number): string => status >= 100 && status <= 599
  ? (statusLabels[status] ??= KNOWN_STATUSES.has(status) ? String(status) : `${Math.floor(status / 100)}xx`)
  : 'other'

/**
 * A 405 is counted under method `OTHER`: the methods a route does not serve
 * would otherwise each make series of their own on every route.
 */
function methodLabel(method: string, status: number): string {
  return status !== 405 && KNOWN_METHODS.has(method) ? method : 'OTHER'
}

function cellOf(route: string, sentMethod: string, status: number): RequestCell {
  const method = methodLabel(sentMethod, status)
  let byMethod = cells.get(route)
  if (byMethod === undefined) cells.set(route, (byMethod = new Map()))
  let byStatus = byMethod.get(method)
  if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()))
  const label = statusLabel(status)
  let cell = byStatus.get(label)
  if (cell === undefined) {
    cell = { labels: { route, method, status: label }, count: 0, sum: 0, buckets: new Float64Array(LATENCY_BUCKETS.length + 1) }
    byStatus.set(label, cell)
  }
  return cell
}

function* allCells(): Generator<RequestCell> {
  for (const byMethod of cells.values()) for (const byStatus of byMethod.values()) yield* byStatus.values()
}

export function requestAnswered(route: string, method: string, status: number, seconds: number): void {
  const cell = cellOf(route, method, status)
  cell.count++
  cell.sum += seconds
  let b = 0
  while (b < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[b]!) b++
  cell.buckets[b]!++
}

new Counter({
  name: 'http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames: ROUTE_LABELS, registers: [registry],
  collect() {
    this.reset()
    for (const cell of allCells()) this.inc(cell.labels, cell.count)
  },
})

// prom-client's Histogram reads its values through this method (not in its
// typings); the registry calls it for the text format, get() splays its shared labels.
declare module 'prom-client' {
  interface Histogram<T extends string> {
    getForPromString(): ReturnType<Histogram<T>['get']>
  }
}

/** A value in prom-client's own histogram form: `le` as the label, the series' labels shared. */
const seriesValue = (metricName: string, labels: Record<string, string | number>, sharedLabels: LabelValues<RouteLabel>, value: number, exemplar: null | undefined) => ({ metricName, labels, sharedLabels, value, exemplar })

/** The request latency histogram, its values read from the cells (prom-client has no way to set a histogram's buckets). */
class RequestSeconds extends Histogram<RouteLabel> {
  override async getForPromString(): ReturnType<Histogram<RouteLabel>['get']> {
    const data = await super.getForPromString()
    const name = 'http_request_duration_seconds'
    for (const cell of allCells()) {
      let cumulative = 0
      LATENCY_BUCKETS.forEach((le, i) => {
        cumulative += cell.buckets[i]!
        data.values.push(seriesValue(`${name}_bucket`, { le }, cell.labels, cumulative, null))
      })
      data.values.push(
        seriesValue(`${name}_bucket`, { le: '+Inf' }, cell.labels, cell.count, null),
        seriesValue(`${name}_sum`, {}, cell.labels, cell.sum, undefined),
        seriesValue(`${name}_count`, {}, cell.labels, cell.count, undefined),
      )
    }
    return data
  }
}

new RequestSeconds({ name: 'http_request_duration_seconds', help: 'Time from the request to its answer, by route template, method and status', labelNames: ROUTE_LABELS, buckets: LATENCY_BUCKETS, registers: [registry] })

export const commitBatchSize = new Histogram({ name: 'shard_commit_batch_size', help: 'Writes per group commit, by shard', labelNames: ['shard'] as const, buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512], registers: [registry] })
export const commitSeconds = new Histogram({ name: 'shard_commit_seconds', help: 'Time a group commit takes to commit its LMDB transaction, by shard', labelNames: ['shard'] as const, buckets: LATENCY_BUCKETS, registers: [registry] })
export const flushSeconds = new Histogram({ name: 'shard_flush_seconds', help: 'Time from commit until the commit is flushed to disk, by shard', labelNames: ['shard'] as const, buckets: LATENCY_BUCKETS, registers: [registry] })
export const mapUsedBytes = new Gauge({ name: 'shard_lmdb_map_used_bytes', help: 'Bytes of the LMDB map in use (last page x page size), by shard', labelNames: ['shard'] as const, registers: [registry] })
export const mapSizeBytes = new Gauge({ name: 'shard_lmdb_map_size_bytes', help: 'Size of the LMDB map, by shard', labelNames: ['shard'] as const, registers: [registry] })
export const journalSyncs = new Counter({ name: 'shard_journal_syncs_total', help: 'fdatasyncs of the shard journal (one makes every record appended before it durable), by shard', labelNames: ['shard'] as const, registers: [registry] })
export const journalBytes = new Counter({ name: 'shard_journal_bytes_total', help: 'Bytes appended to the shard journal, by shard', labelNames: ['shard'] as const, registers: [registry] })
export const lmdbSyncs = new Counter({ name: 'shard_lmdb_syncs_total', help: 'Syncs of the shard\'s LMDB data file (journal checkpoints), by shard', labelNames: ['shard'] as const, registers: [registry] })
export const eventsAppended = new Counter({ name: 'graph_events_appended_total', help: 'Events appended to the tenants\' event logs, by shard', labelNames: ['shard'] as const, registers: [registry] })

export const webhookLagSeconds = new Histogram({ name: 'webhook_delivery_lag_seconds', help: 'Time from an event to its acknowledged webhook delivery', buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 3600, 86400], registers: [registry] })
export const webhookSuspensions = new Counter({ name: 'webhook_suspensions_total', help: 'Webhooks suspended after failing for a day', registers: [registry] })
export const eventStreamsOpen = new Gauge({ name: 'event_streams_open', help: 'Open WebSocket event streams', registers: [registry] })
export const clusterForwarded = new Counter({ name: 'cluster_forwarded_requests_total', help: 'Calls forwarded to the owning host (cluster mode), by outcome: answered, unanswered, no_owner, stream', labelNames: ['outcome'] as const, registers: [registry] })
export const clusterOwnedShards = new Gauge({ name: 'cluster_owned_shards', help: 'Shards this host owns now (cluster mode)', registers: [registry] })

new Counter({
  name: 'log_lines_dropped_total', help: 'Log lines dropped because the log\'s thread fell a whole ring behind (src/telemetry/log-ring.ts)', registers: [registry],
  collect() {
    this.reset()
    this.inc(droppedLogLines())
  },
})

export const tokensIssued = new Counter({ name: 'oauth_tokens_issued_total', help: 'Access tokens issued, by grant type', labelNames: ['grant_type'] as const, registers: [registry] })
export const signInFailures = new Counter({ name: 'sign_in_failures_total', help: 'Failed sign-ins (sign-in form and password grant), including refusals during a lock-out', registers: [registry] })
export const lockoutsStarted = new Counter({ name: 'sign_in_lockouts_started_total', help: 'Accounts locked out after too many failed sign-ins', registers: [registry] })

// The figures a dashboard needs beyond the requests (docs/manual/operations.md,
// "Metrics"). Every label value is one of a fixed set named in each help text,
// or a shard, actor or configured gateway service: never a tenant, client or URL.

/** Why an actor's thread ended: past its heap limit (--actor-heap-mb), an uncaught error, or any other exit. */
export type ActorExitReason = 'out_of_heap' | 'crashed' | 'exited'
export const actorExits = new Counter({ name: 'shard_actor_exits_total', help: 'Shard actor threads that ended unasked, by reason (out_of_heap, crashed, exited) and outcome (restarted, stopped: it kept exiting)', labelNames: ['reason', 'outcome'] as const, registers: [registry] })
export const consentsCreated = new Counter({ name: 'graph_consents_created_total', help: 'Consents created (answered 201)', registers: [registry] })
export const consentsRevoked = new Counter({ name: 'graph_consents_revoked_total', help: 'Consent revocations answered 204 (a repeated revocation of a revoked consent included)', registers: [registry] })
export const dataKeysDestroyed = new Counter({ name: 'graph_data_keys_destroyed_total', help: 'Data keys destroyed (crypto-shredding after a revocation), by shard', labelNames: ['shard'] as const, registers: [registry] })
export const webhookDeliveries = new Counter({ name: 'webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome: delivered, rejected (a non-2xx answer), unreachable (no answer); a failed one is retried unless it suspends the webhook', labelNames: ['outcome'] as const, registers: [registry] })
export const attemptsRefused = new Counter({ name: 'auth_attempts_refused_total', help: 'Password and client-secret checks refused before they ran, by limit: source (the per-address budget), account (the per-account budget), lockout (the account is locked out)', labelNames: ['limit'] as const, registers: [registry] })
export const lastBackupSeconds = new Gauge({ name: 'backup_last_success_timestamp_seconds', help: 'When the last backup this process completed began (unix seconds; every write acknowledged before it is in the copy); 0 until one completes', registers: [registry] })
export const gatewayUpstreamSeconds = new Histogram({ name: 'gateway_upstream_duration_seconds', help: 'Time from forwarding a request to the service behind the gateway until its answer\'s headers (or its failure), by service (package/service, as configured)', labelNames: ['service'] as const, buckets: LATENCY_BUCKETS, registers: [registry] })

/** The OAuth `error` values (RFC 6749, 6750, OpenID Connect Core) counted by name; any other is counted as `other`. */
const OAUTH_ERRORS = new Set([
  'invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope',
  'access_denied', 'unsupported_response_type', 'server_error', 'temporarily_unavailable', 'invalid_token', 'insufficient_scope',
  'login_required', 'consent_required', 'interaction_required', 'account_selection_required', 'request_not_supported', 'request_uri_not_supported',
])
const oauthErrors = new Counter({ name: 'oauth_errors_total', help: 'Answers carrying an OAuth error (a JSON error body, the authorization endpoint\'s error page or its redirect with error=), by its error value; a value outside the known set is other', labelNames: ['error'] as const, registers: [registry] })

export function oauthErrorAnswered(error: string): void {
  oauthErrors.labels(OAUTH_ERRORS.has(error) ? error : 'other').inc()
}
