// The Prometheus metrics (prom-client), served at GET /metrics
// (src/operations/endpoints.ts). The layers push into these; gauges read at
// scrape time are registered by src/operations/sources.ts.
import { Counter, Gauge, Histogram, Registry } from 'prom-client'

export const registry = new Registry()

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames: ['route', 'method', 'status'] as const, registers: [registry] })
const requestSeconds = new Histogram({ name: 'http_request_duration_seconds', help: 'Time from the request to its answer, by route template, method and status', labelNames: ['route', 'method', 'status'] as const, buckets: LATENCY_BUCKETS, registers: [registry] })

type Child = { count: ReturnType<typeof requests.labels>; seconds: ReturnType<typeof requestSeconds.labels> }
/** The label children by "route method status": a Map hit instead of prom-client's label hashing per request. */
const children = new Map<string, Child>()

export function requestAnswered(route: string, method: string, status: number, seconds: number): void {
  const key = `${route} ${method} ${status}`
  let child = children.get(key)
  if (child === undefined) {
    const labels = { route, method, status: String(status) }
    child = { count: requests.labels(labels), seconds: requestSeconds.labels(labels) }
    children.set(key, child)
  }
  child.count.inc()
  child.seconds.observe(seconds)
}

export const commitBatchSize = new Histogram({ name: 'shard_commit_batch_size', help: 'Writes per group commit, by shard', labelNames: ['shard'] as const, buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512], registers: [registry] })
export const commitSeconds = new Histogram({ name: 'shard_commit_seconds', help: 'Time a group commit takes to commit its LMDB transaction, by shard', labelNames: ['shard'] as const, buckets: LATENCY_BUCKETS, registers: [registry] })
export const flushSeconds = new Histogram({ name: 'shard_flush_seconds', help: 'Time from commit until the commit is flushed to disk, by shard', labelNames: ['shard'] as const, buckets: LATENCY_BUCKETS, registers: [registry] })
export const mapUsedBytes = new Gauge({ name: 'shard_lmdb_map_used_bytes', help: 'Bytes of the LMDB map in use (last page x page size), by shard', labelNames: ['shard'] as const, registers: [registry] })
export const mapSizeBytes = new Gauge({ name: 'shard_lmdb_map_size_bytes', help: 'Size of the LMDB map, by shard', labelNames: ['shard'] as const, registers: [registry] })
export const eventsAppended = new Counter({ name: 'graph_events_appended_total', help: 'Events appended to the tenants\' event logs, by shard', labelNames: ['shard'] as const, registers: [registry] })

export const webhookLagSeconds = new Histogram({ name: 'webhook_delivery_lag_seconds', help: 'Time from an event to its acknowledged webhook delivery', buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 3600, 86400], registers: [registry] })
export const webhookSuspensions = new Counter({ name: 'webhook_suspensions_total', help: 'Webhooks suspended after failing for a day', registers: [registry] })
export const eventStreamsOpen = new Gauge({ name: 'event_streams_open', help: 'Open WebSocket event streams', registers: [registry] })
export const clusterForwarded = new Counter({ name: 'cluster_forwarded_requests_total', help: 'Calls forwarded to the owning host (cluster mode), by outcome: answered, unanswered, no_owner, stream', labelNames: ['outcome'] as const, registers: [registry] })
export const clusterOwnedShards = new Gauge({ name: 'cluster_owned_shards', help: 'Shards this host owns now (cluster mode)', registers: [registry] })

export const tokensIssued = new Counter({ name: 'oauth_tokens_issued_total', help: 'Access tokens issued, by grant type', labelNames: ['grant_type'] as const, registers: [registry] })
export const signInFailures = new Counter({ name: 'sign_in_failures_total', help: 'Failed sign-ins (sign-in form and password grant), including refusals during a lock-out', registers: [registry] })
export const lockoutsStarted = new Counter({ name: 'sign_in_lockouts_started_total', help: 'Accounts locked out after too many failed sign-ins', registers: [registry] })
