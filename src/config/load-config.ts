// The one config loader: flags win over environment variables, which win over
// defaults. Everything is validated here once; the rest of the code trusts it.
import { availableParallelism } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { invalidAllowEntry } from '../net/webhook-policy'
import { parseCidr } from '../net/addresses'
import { originProblem } from '../net/origin'
import { CLUSTER_DURABILITIES, type ClusterOptions } from './cluster-options'
import { TRACE_VARIABLES, traceOptions, type TraceOptions } from './trace-options'

export interface Config {
  port: number
  host: string
  dataDir: string
  /** Absolute path of the bootstrap JSON file, or undefined for none. */
  bootstrap: string | undefined
  workers: number
  /** The V8 old generation of each shard actor thread at most, MB: bounds the process's private memory (docs/design/performance.md, "In-memory state of an actor"). */
  actorHeapMb: number
  /** How far V8 lets a thread's heap grow past what is live before it collects, in percent (src/start/v8-heap.ts); 0 leaves V8's own choice. */
  heapGrowthPercent: number
  /** Shard count used only when the data directory is created. */
  shards: number
  maxBody: number
  /** JSON request bodies may nest at most this deep (src/http/json-limits.ts). */
  maxJsonDepth: number
  /** JSON request bodies may hold at most this many elements (array items and object members). */
  maxJsonElements: number
  masterKeyFile: string
  /** The shred log of destroyed data keys (src/crypto/shred-log.ts), outside the data directory. */
  shredLog: string
  accessTokenTtl: number
  eventRetentionMs: number
  /** At most this many events are kept per tenant. */
  eventRetentionCount: number
  /** At most this many open event streams (WebSocket) per tenant. */
  maxStreamsPerTenant: number
  /** Bytes streamed answers may hold for readers who do not read, in all, in MB: past it a new streamed read answers 503 (src/http/stream.ts). */
  maxStreamBufferMb: number
  /** Set when the environment or flags name it; otherwise derived from host and port once listening. */
  publicUrl: string | undefined
  /** Host names, *.suffixes, IPs and CIDRs webhooks may reach although they are not public (--webhook-allow). */
  webhookAllow: string[]
  /** Proxies (IPs, CIDRs) whose X-Forwarded-For names the client (--trust-proxy). */
  trustProxy: string[]
  /** How long a shutdown waits for the requests in flight before closing their connections. */
  shutdownTimeoutMs: number
  /** The first webhook retry delay; the back-off doubles it up to 300 times it (src/events/webhook-delivery.ts). */
  webhookRetryBaseMs: number
  /** Origins whose pages may call the graph API and its event stream (CORS); none by default. */
  corsOrigins: string[]
  /** How long the gateway waits for a service's headers, and between its body chunks. */
  gatewayTimeoutMs: number
  /** Requests the gateway forwards to one service at once. */
  gatewayMaxConcurrent: number
  /** Who may read GET /metrics: anyone, nobody, or a bearer token with scope platform.metrics (--metrics). */
  metrics: MetricsAccess
  /** The server log's level (--log-level). */
  logLevel: LogLevel
  /** Cluster mode (docs/manual/cluster.md); undefined: the single-machine mode, which loads nothing of it. */
  cluster: ClusterOptions | undefined
  /** Traces (src/config/trace-options.ts, from the standard OTEL_* variables); undefined: off, and nothing of OpenTelemetry loads. */
  traces: TraceOptions | undefined
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const METRICS_ACCESS = ['open', 'off', 'token'] as const
export type MetricsAccess = (typeof METRICS_ACCESS)[number]

/** What the command-line tools take besides the server's options: how to reach the running server. */
export interface ToolConfig extends Config {
  serverUrl: string | undefined
  adminClientId: string | undefined
  adminClientSecret: string | undefined
  /** The new directory a backup is written to (backup.js). */
  backupTo: string | undefined
  /** The tenant export-tenant.js and import-tenant.js move. */
  tenant: string | undefined
  /** The NDJSON file they write or read (standard output or input when not given). */
  file: string | undefined
  /** rotate-master-key.js: the new master key file (created when missing). */
  newMasterKeyFile: string | undefined
  /** import-tenant.js: the input is bulk write lines for POST /graph/v1/{tenant}/bulk, not an export. */
  operations: boolean
}

export class ConfigError extends Error {}

const DEMO_BOOTSTRAP = join(__dirname, '..', '..', '..', 'bootstrap', 'demo.json')

/** The shipped demo bootstrap (its credentials are public, so the start may print them). */
export function isDemoBootstrap(path: string | undefined): boolean {
  return path === DEMO_BOOTSTRAP
}

export interface OptionSpec {
  flag: string
  env: string
  /** Taken by the command-line tools only, not by the server. */
  tool?: true
  /** A switch: the flag alone means true; the variable (or `--flag=`) is true or false. */
  boolean?: true
}

export const OPTIONS = {
  port: { flag: '--port', env: 'PORT' },
  host: { flag: '--host', env: 'HOST' },
  dataDir: { flag: '--data-dir', env: 'DATA_DIR' },
  bootstrap: { flag: '--bootstrap', env: 'BOOTSTRAP' },
  workers: { flag: '--workers', env: 'WORKERS' },
  actorHeapMb: { flag: '--actor-heap-mb', env: 'ACTOR_HEAP_MB' },
  heapGrowthPercent: { flag: '--heap-growth-percent', env: 'HEAP_GROWTH_PERCENT' },
  shards: { flag: '--shards', env: 'SHARDS' },
  maxBody: { flag: '--max-body', env: 'MAX_BODY' },
  maxJsonDepth: { flag: '--max-json-depth', env: 'MAX_JSON_DEPTH' },
  maxJsonElements: { flag: '--max-json-elements', env: 'MAX_JSON_ELEMENTS' },
  masterKeyFile: { flag: '--master-key-file', env: 'MASTER_KEY_FILE' },
  shredLog: { flag: '--shred-log', env: 'SHRED_LOG_FILE' },
  accessTokenTtl: { flag: '--access-token-ttl', env: 'ACCESS_TOKEN_TTL' },
  eventRetention: { flag: '--event-retention', env: 'EVENT_RETENTION' },
  eventRetentionCount: { flag: '--event-retention-count', env: 'EVENT_RETENTION_COUNT' },
  maxStreamsPerTenant: { flag: '--max-streams-per-tenant', env: 'MAX_STREAMS_PER_TENANT' },
  maxStreamBufferMb: { flag: '--max-stream-buffer-mb', env: 'MAX_STREAM_BUFFER_MB' },
  publicUrl: { flag: '--public-url', env: 'PUBLIC_URL' },
  webhookAllow: { flag: '--webhook-allow', env: 'WEBHOOK_ALLOW' },
  trustProxy: { flag: '--trust-proxy', env: 'TRUST_PROXY' },
  shutdownTimeout: { flag: '--shutdown-timeout', env: 'SHUTDOWN_TIMEOUT' },
  webhookRetryBase: { flag: '--webhook-retry-base-ms', env: 'WEBHOOK_RETRY_BASE_MS' },
  corsOrigins: { flag: '--cors-origins', env: 'CORS_ORIGINS' },
  gatewayTimeout: { flag: '--gateway-timeout', env: 'GATEWAY_TIMEOUT' },
  gatewayMaxConcurrent: { flag: '--gateway-max-concurrent', env: 'GATEWAY_MAX_CONCURRENT' },
  metrics: { flag: '--metrics', env: 'METRICS' },
  logLevel: { flag: '--log-level', env: 'LOG_LEVEL' },
  natsUrl: { flag: '--nats-url', env: 'NATS_URL' },
  nodeId: { flag: '--node-id', env: 'NODE_ID' },
  kekFile: { flag: '--kek-file', env: 'KEK_FILE' },
  clusterUrl: { flag: '--cluster-url', env: 'CLUSTER_URL' },
  leaseMs: { flag: '--lease-ms', env: 'LEASE_MS' },
  clusterDurability: { flag: '--cluster-durability', env: 'CLUSTER_DURABILITY' },
  snapshotEntries: { flag: '--snapshot-entries', env: 'SNAPSHOT_ENTRIES' },
  snapshotInterval: { flag: '--snapshot-interval', env: 'SNAPSHOT_INTERVAL' },
  snapshotsKept: { flag: '--snapshots-kept', env: 'SNAPSHOTS_KEPT' },
  serverUrl: { flag: '--server-url', env: 'SERVER_URL', tool: true },
  adminClientId: { flag: '--admin-client-id', env: 'ADMIN_CLIENT_ID', tool: true },
  adminClientSecret: { flag: '--admin-client-secret', env: 'ADMIN_CLIENT_SECRET', tool: true },
  backupTo: { flag: '--to', env: 'BACKUP_TO', tool: true },
  tenant: { flag: '--tenant', env: 'TENANT', tool: true },
  file: { flag: '--file', env: 'TENANT_FILE', tool: true },
  newMasterKeyFile: { flag: '--new-master-key-file', env: 'NEW_MASTER_KEY_FILE', tool: true },
  operations: { flag: '--operations', env: 'IMPORT_OPERATIONS', tool: true, boolean: true },
} satisfies Record<string, OptionSpec>

/** The --help text of each option (default and meaning), one line each; docs/manual/options.md is generated from it (src/config/options-doc.ts). */
// Every option's: the compiler refuses an option added without one.
export const HELP: Record<OptionName, string> = {
  port: 'port to listen on; the listening line names the bound address (default 8080; 0 picks a free one)',
  host: 'address to listen on (default 127.0.0.1)',
  dataDir: 'data directory: LMDB shards (shards/<n>), the auth store (auth), manifest.json; owner-only, locked while a server runs (default ./data)',
  bootstrap: 'bootstrap JSON file applied at every start, idempotent upserts (default bootstrap/demo.json; empty for none)',
  workers: 'shard actor threads; may change between restarts (default min(2, cores))',
  actorHeapMb: 'V8 old generation of each shard actor thread at most, in MB, 64 or more; an actor that outgrows it is restarted, its calls in flight get 503 (default 192)',
  heapGrowthPercent: 'how far each thread\'s heap grows past what V8 found live before it collects again, in percent, 0 to 400 (default 30; 0: V8\'s own factor)',
  shards: 'shard count, used only when the data directory is created; kept in manifest.json (default 4)',
  maxBody: 'request body limit in bytes; 413 past it (default 1048576)',
  maxJsonDepth: 'JSON request bodies nest at most this deep, the body itself level 1; 400 past it (default 64)',
  maxJsonElements: 'JSON request bodies hold at most this many elements (array items and object members, plus the body\'s value); 400 past it (default 100000)',
  masterKeyFile: 'master key file, created with mode 0600 when missing; keep it outside the data directory (default ./secrets/master.key)',
  shredLog: 'append-only log of destroyed data keys, outside the data directory; required to start on a restored backup (default shred.log beside the master key)',
  accessTokenTtl: 'access token lifetime in seconds (default 3600)',
  eventRetention: 'events older than this are dropped, seconds or with ms/s/m/h/d (default 7d)',
  eventRetentionCount: 'events kept per tenant at most (default 1000000)',
  maxStreamsPerTenant: 'open event streams (WebSocket) per tenant; one more gets 503 with Retry-After (default 100)',
  maxStreamBufferMb: 'MB that streamed answers (neighbours, lists, exports) may hold in all for clients that read slower than they are served; past it a new streamed read gets 503 with Retry-After (default 64)',
  publicUrl: 'base of every URL the service writes (schema, neighbours_url, moreInfo, the OAuth issuer) (default http://<host>:<port>)',
  webhookAllow: 'comma-separated host names, *.suffixes, IPs and CIDRs that webhooks may reach although not public: loopback, private, link-local... (default none)',
  trustProxy: 'comma-separated IPs and CIDRs of reverse proxies; behind one, the client is the right-most X-Forwarded-For entry that is not a proxy (default none)',
  shutdownTimeout: 'on SIGTERM or SIGINT, how long requests in flight may take before their connections are closed (default 10s)',
  webhookRetryBase: 'first webhook retry delay in ms, doubling up to 300 times it (default 1000)',
  corsOrigins: 'comma-separated origins (scheme, host and port; no path or trailing slash) whose pages may call the graph API and open the event stream (default none)',
  gatewayTimeout: 'how long the gateway waits for a service\'s response headers (then 504) and between two body chunks (then the connection is cut), seconds or with ms/s/m (default 30s)',
  gatewayMaxConcurrent: 'requests forwarded to one gateway service at once; one more gets 503 with Retry-After (default 64)',
  metrics: 'GET /metrics: open, off, or token (scope platform.metrics) (default open)',
  logLevel: 'log level of the JSON log on stderr: fatal, error, warn, info, debug, trace, silent (default info)',
  natsUrl: 'cluster mode: comma-separated NATS server URLs, nats://host:4222 (default none: one machine, nothing of cluster mode loads)',
  nodeId: 'cluster mode: this host\'s name, unique in the cluster (letters, digits, _ and -)',
  kekFile: 'cluster mode: the key-encryption key file every host shares, one base64 32-byte key per line, the current one first; never generated',
  clusterUrl: 'cluster mode: this host\'s own URL for the other hosts (default its public URL); lets the hosts share one --public-url',
  leaseMs: 'cluster mode: shard lease period in ms, 1000 to 600000; a host serves a shard while its last renewal is younger than 0.8 of it (default 5000)',
  clusterDurability: 'cluster mode: local (acknowledged once the stream took a write and this host synced it) or quorum (once the stream took it; survives the loss of one server, not a power loss of the quorum) (default local)',
  snapshotEntries: 'cluster mode: snapshot a shard (and the auth store) into NATS every this many replicated batches (default 10000)',
  snapshotInterval: 'cluster mode: or this long after the last snapshot, seconds or with ms/s/m/h/d (default 1h)',
  snapshotsKept: 'cluster mode: snapshots kept per shard, 1 to 100; its stream is purged below the oldest (default 2)',
  serverUrl: 'URL of the running server (default: the one the data directory lock names)',
  adminClientId: 'a platform.admin client of the running server',
  adminClientSecret: "that client's secret (prefer the variable: flags show in ps)",
  backupTo: 'backup.js: the new (or empty) directory the backup is written to, on the server host',
  tenant: 'export-tenant.js, import-tenant.js: the tenant to move',
  file: 'export-tenant.js, import-tenant.js: the NDJSON file (default standard output / input)',
  newMasterKeyFile: 'rotate-master-key.js: the new master key file (created when missing)',
  operations: 'import-tenant.js: the input is bulk write lines, streamed to POST /graph/v1/{tenant}/bulk, not an export; a switch, the variable true or false (default false)',
}

/** The --help text, generated from the options table. */
/** How the running command was invoked, when not as `command` below: `profile-graph backup` (src/commands/cli.ts). */
let invokedAs: string | undefined

export function setInvokedAs(name: string): void {
  invokedAs = name
}

export function usage(command: string, tool = false): string {
  const lines = [`usage: ${invokedAs ?? command} [options]`, '', 'Each option is a flag or an environment variable; flags win.', '']
  for (const [name, spec] of Object.entries(OPTIONS) as [OptionName, OptionSpec][]) {
    if (spec.tool === true && !tool) continue
    lines.push(`  ${(spec.boolean === true ? spec.flag : `${spec.flag} <value>`).padEnd(32)} ${spec.env.padEnd(24)} ${HELP[name]}`)
  }
  lines.push(`  ${'--help'.padEnd(32)} ${''.padEnd(24)} this text`)
  if (!tool) {
    lines.push('', 'Traces (OpenTelemetry), variables only:')
    for (const [name, help] of Object.entries(TRACE_VARIABLES)) lines.push(`  ${name.padEnd(57)} ${help}`)
  }
  return lines.join('\n')
}

/** Whether the arguments ask for the usage text. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h')
}

type OptionName = keyof typeof OPTIONS

function parseFlags(argv: readonly string[], tool: boolean): Map<string, string> {
  const known = new Map((Object.values(OPTIONS) as OptionSpec[]).filter((o) => tool || o.tool !== true).map((o) => [o.flag, o]))
  const values = new Map<string, string>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    const eq = arg.indexOf('=')
    const name = eq === -1 ? arg : arg.slice(0, eq)
    if (!known.has(name)) throw new ConfigError(`unknown option ${name}`)
    let value: string | undefined
    if (eq !== -1) value = arg.slice(eq + 1)
    else if (known.get(name)?.boolean === true) value = 'true'
    else value = argv[++i]
    if (value === undefined) throw new ConfigError(`option ${name} needs a value`)
    values.set(name, value)
  }
  return values
}

function integer(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`)
  const n = Number(raw)
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`)
  return n
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** "604800" (seconds) or "7d", "12h", "30m", "10s", "500ms". */
export function parseDurationMs(name: string, raw: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(raw.trim())
  if (m === null) throw new ConfigError(`${name} must be seconds or a number with ms, s, m, h or d, got "${raw}"`)
  return Number(m[1]) * (DURATION_UNITS[m[2] ?? 's'] as number)
}

/** A switch: true or false; undefined and empty mean false. */
function boolean(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === 'false') return false
  if (raw === 'true') return true
  throw new ConfigError(`${name} must be true or false, got "${raw}"`)
}

/** A comma-separated list; `why` says what is wrong with an entry (undefined when it is fine). */
function list(name: string, raw: string | undefined, why: (entry: string) => string | undefined): string[] {
  const entries = (raw ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')
  for (const e of entries) {
    const problem = why(e)
    if (problem !== undefined) throw new ConfigError(`${name}: ${problem}`)
  }
  return entries
}

/** One of `allowed`; undefined and empty mean the default. */
function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`)
  return raw as T
}

/** Milliseconds ≥ 1 (tests set it low so that retries need no waiting); empty means the default. */
function retryBaseMs(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1000
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw new ConfigError(`WEBHOOK_RETRY_BASE_MS must be a whole number of milliseconds ≥ 1, got "${raw}"`)
  return Number(raw)
}

/**
 * Cluster mode: all of --nats-url, --node-id and --kek-file, or none of them
 * (the single-machine mode); half a cluster configuration is a start error.
 */
function clusterOptions(natsUrl: string | undefined, nodeId: string | undefined, kekFile: string | undefined, flags: ClusterFlags): ClusterOptions | undefined {
  const { clusterUrl, leaseMs, durability, snapshots } = flags
  const given = { '--nats-url': natsUrl, '--node-id': nodeId, '--kek-file': kekFile }
  const missing = Object.entries(given).filter(([, v]) => v === undefined || v === '').map(([flag]) => flag)
  if (missing.length === 3) {
    const alone = Object.entries({ '--cluster-url': clusterUrl, '--lease-ms': leaseMs, '--cluster-durability': durability, '--snapshot-entries': snapshots.entries, '--snapshot-interval': snapshots.interval, '--snapshots-kept': snapshots.kept })
      .find(([, v]) => v !== undefined && v !== '')
    if (alone !== undefined) throw new ConfigError(`${alone[0]} applies only in cluster mode: also give --nats-url, --node-id and --kek-file`)
    return undefined
  }
  if (missing.length > 0) throw new ConfigError(`cluster mode needs --nats-url, --node-id and --kek-file; missing ${missing.join(', ')}`)
  const servers = list('NATS_URL', natsUrl, (e) => (/^(nats|tls|wss?):\/\/[^/\s]+\/?$/.test(e) || /^[^/\s:]+:\d+$/.test(e) ? undefined : `"${e}" is not a NATS URL (nats://host:port)`))
  if (servers.length === 0) throw new ConfigError('NATS_URL names no server')
  // The node id becomes part of a NATS subject (hostSubject): no dots, spaces or wildcards.
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(nodeId as string)) throw new ConfigError(`NODE_ID must be 1-64 letters, digits, _ or -, got "${nodeId as string}"`)
  return {
    servers,
    nodeId: nodeId as string,
    kekFile: resolve(kekFile as string),
    hostUrl: httpUrl('CLUSTER_URL', clusterUrl),
    // Shorter than a second would renew faster than NATS round trips under load; longer than 10 minutes leaves shards ownerless too long.
    leaseMs: integer('LEASE_MS', leaseMs === undefined || leaseMs === '' ? '5000' : leaseMs, 1000, 600_000),
    durability: oneOf('CLUSTER_DURABILITY', durability, CLUSTER_DURABILITIES, 'local'),
    snapshots: {
      everyEntries: integer('SNAPSHOT_ENTRIES', orDefault(snapshots.entries, '10000'), 1, Number.MAX_SAFE_INTEGER),
      everyMs: parseDurationMs('SNAPSHOT_INTERVAL', orDefault(snapshots.interval, '1h')),
      // At least one: the stream is purged below the oldest kept snapshot.
      keep: integer('SNAPSHOTS_KEPT', orDefault(snapshots.kept, '2'), 1, 100),
    },
  }
}

/** An http(s) base URL without its trailing slashes; absent stays absent. */
function httpUrl(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  if (!/^https?:\/\/[^/]+(\/.*)?$/.test(raw)) throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`)
  return raw.replace(/\/+$/, '')
}

/** The cluster options besides the three that turn cluster mode on, as given. */
interface ClusterFlags {
  clusterUrl: string | undefined
  leaseMs: string | undefined
  durability: string | undefined
  snapshots: { entries: string | undefined; interval: string | undefined; kept: string | undefined }
}

// Each actor's caches hold about 60 MB at their limits (bench/MEASUREMENTS.md, "Memory: each actor's heap
// capped (the 600 MB rule), 2026-11-26, evening"); without a cap V8 lets a
// busy thread's heap grow to several times what is live before it collects.
const DEFAULT_ACTOR_HEAP_MB = 192
// The front thread has no cap: V8 let it grow to up to 4x what is live (100-180 MB at 50-60 MB live in the
// scale run's read passes). 30 is the most V8 allows a 192 MB actor on its own (bench/MEASUREMENTS.md,
// "Memory: the front thread's heap (the 600 MB rule), 2026-11-26, late night: 525 MB, met").
const DEFAULT_HEAP_GROWTH_PERCENT = 30

const orDefault = (v: string | undefined, d: string): string => (v === undefined || v === '' ? d : v)

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv, tool = false): Config {
  const flags = parseFlags(argv, tool)
  const get = (name: OptionName): string | undefined => {
    const spec = OPTIONS[name]
    return flags.get(spec.flag) ?? env[spec.env]
  }
  const bootstrap = get('bootstrap')
  const publicUrl = httpUrl('PUBLIC_URL', get('publicUrl'))
  return {
    port: integer('--port', get('port') ?? '8080', 0, 65535),
    host: get('host') ?? '127.0.0.1',
    dataDir: resolve(get('dataDir') ?? './data'),
    bootstrap: bootstrap === undefined ? DEMO_BOOTSTRAP : bootstrap === '' ? undefined : resolve(bootstrap),
    workers: integer('--workers', get('workers') ?? String(Math.min(2, availableParallelism())), 1, 64),
    actorHeapMb: integer('--actor-heap-mb', get('actorHeapMb') ?? String(DEFAULT_ACTOR_HEAP_MB), 64, 1024 * 1024),
    heapGrowthPercent: integer('--heap-growth-percent', get('heapGrowthPercent') ?? String(DEFAULT_HEAP_GROWTH_PERCENT), 0, 400),
    shards: integer('--shards', get('shards') ?? '4', 1, 256),
    maxBody: integer('--max-body', get('maxBody') ?? String(1024 * 1024), 1, 1024 * 1024 * 1024),
    // Deep enough for real nested enricher data, far below what overflows a recursive walk (~3,000 levels).
    maxJsonDepth: integer('--max-json-depth', get('maxJsonDepth') ?? '64', 1, 1000),
    maxJsonElements: integer('--max-json-elements', get('maxJsonElements') ?? '100000', 1, 100_000_000),
    masterKeyFile: resolve(get('masterKeyFile') ?? './secrets/master.key'),
    shredLog: resolve(get('shredLog') ?? join(dirname(resolve(get('masterKeyFile') ?? './secrets/master.key')), 'shred.log')),
    accessTokenTtl: integer('ACCESS_TOKEN_TTL', get('accessTokenTtl') ?? '3600', 1, 10 * 365 * 86400),
    eventRetentionMs: parseDurationMs('EVENT_RETENTION', get('eventRetention') ?? '7d'),
    eventRetentionCount: integer('EVENT_RETENTION_COUNT', get('eventRetentionCount') ?? '1000000', 1, Number.MAX_SAFE_INTEGER),
    maxStreamsPerTenant: integer('MAX_STREAMS_PER_TENANT', get('maxStreamsPerTenant') ?? '100', 1, 1_000_000),
    maxStreamBufferMb: integer('MAX_STREAM_BUFFER_MB', get('maxStreamBufferMb') ?? '64', 1, 1024 * 1024),
    publicUrl,
    webhookAllow: list('WEBHOOK_ALLOW', get('webhookAllow'), invalidAllowEntry),
    trustProxy: list('TRUST_PROXY', get('trustProxy'), (e) => (parseCidr(e) === undefined ? `"${e}" is not an IP address or CIDR range` : undefined)),
    shutdownTimeoutMs: parseDurationMs('SHUTDOWN_TIMEOUT', get('shutdownTimeout') ?? '10s'),
    webhookRetryBaseMs: retryBaseMs(get('webhookRetryBase')),
    corsOrigins: list('CORS_ORIGINS', get('corsOrigins'), originProblem),
    gatewayTimeoutMs: parseDurationMs('GATEWAY_TIMEOUT', get('gatewayTimeout') ?? '30s'),
    gatewayMaxConcurrent: integer('GATEWAY_MAX_CONCURRENT', get('gatewayMaxConcurrent') ?? '64', 1, 100_000),
    metrics: oneOf('METRICS', get('metrics'), METRICS_ACCESS, 'open'),
    logLevel: oneOf('LOG_LEVEL', get('logLevel'), LOG_LEVELS, 'info'),
    cluster: clusterOptions(get('natsUrl'), get('nodeId'), get('kekFile'), {
      clusterUrl: get('clusterUrl'),
      leaseMs: get('leaseMs'),
      durability: get('clusterDurability'),
      snapshots: { entries: get('snapshotEntries'), interval: get('snapshotInterval'), kept: get('snapshotsKept') },
    }),
    // The commands never trace: only the server reads these.
    traces: tool ? undefined : traceOptions(env),
  }
}

/** The options of a command-line tool: the server's, plus how to reach the running server. */
export function loadToolConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ToolConfig {
  const flags = parseFlags(argv, true)
  const get = (name: OptionName): string | undefined => flags.get(OPTIONS[name].flag) ?? env[OPTIONS[name].env]
  const serverUrl = get('serverUrl')?.replace(/\/+$/, '')
  if (serverUrl !== undefined && !/^https?:\/\/[^/]+(\/.*)?$/.test(serverUrl)) throw new ConfigError(`SERVER_URL must be an http(s) URL, got "${serverUrl}"`)
  const backupTo = get('backupTo')
  const newMasterKeyFile = get('newMasterKeyFile')
  return { ...loadConfig(argv, env, true), serverUrl, adminClientId: get('adminClientId'), adminClientSecret: get('adminClientSecret'),
    backupTo: backupTo === undefined ? undefined : resolve(backupTo),
    tenant: get('tenant'),
    file: get('file'),
    newMasterKeyFile: newMasterKeyFile === undefined ? undefined : resolve(newMasterKeyFile),
    operations: boolean('IMPORT_OPERATIONS', get('operations')),
  }
}
