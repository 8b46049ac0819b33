// Command line of `npm run bench -- [options]` and the two profiles.
import { TENANT_COUNT } from './fixture'

export interface DataShape {
  /** Preloaded customers c0.. per tenant (get-node, list-q, relations). */
  customersPerTenant: number
  /** Preloaded products p0.. per tenant (at least 1000: the degree-1000 hubs link to p0..p999). */
  productsPerTenant: number
  /** Hubs of degree 10 and 1000 per tenant (neighbours-10 / neighbours-1000). */
  hub10PerTenant: number
  hub1000PerTenant: number
  /** put-node draws its ids from this many. */
  putIdSpace: number
}

export interface ScaleShape {
  /** Nodes and relations loaded in total, in `slices` equal slices. */
  nodes: number
  relationsPerNode: number
  slices: number
}

export interface Options {
  mode: 'quick' | 'full'
  /** --scale: the ingest report instead of the scenarios. */
  scale: ScaleShape | undefined
  warmupMs: number
  durationMs: number
  connections: number
  pipelining: number
  latencyConnections: number
  workers: number
  data: DataShape
  /** Scenario names to run; empty = all. */
  only: string[]
  skipLatency: boolean
  /** --cpu-prof DIR: the service writes a .cpuprofile per thread (front, actors) into DIR when it stops. */
  cpuProfDir: string | undefined
  /** Before each measured run, wait at most this long for other processes to calm down (0: never wait or re-run). */
  quietWaitMs: number
  /** --tenants: the passes run once per entry, the requests spread over that many tenants (the data set always holds all of them). */
  tenants: number[]
}

export class UsageError extends Error {}

export const USAGE = `usage: npm run bench -- [--quick | --scale] [options]
  --quick              every scenario 3 s on small data (a check, a few minutes)
  (default)            the full run: 10 s per scenario, larger data
  --scale              ingest report: 1M nodes and 5M relations through the API in ten
                       slices (with --quick: 100k nodes, 500k relations)
  --duration S         seconds per measured run
  --warmup S           seconds of warm-up before each measured run
  --connections N      connections of the throughput pass (default 128)
  --pipelining N       pipelining depth of the throughput pass (default 1: the service,
                       on uWebSockets.js with asynchronous answers, closes pipelined connections)
  --workers N          the server's --workers (default 2)
  --only a,b           run only these scenarios
  --tenants N[,M]      spread the requests over the first N of the 16 tenants; a list runs
                       every pass once per entry (default 16,1 in the full run, 16 quick)
  --no-latency         skip the open-loop latency pass (fixed rates at 25/50/75% of each
                       scenario's measured maximum)
  --cpu-prof DIR       profile the service (node --cpu-prof): one .cpuprofile per thread in DIR
  --quiet-wait S       wait up to S seconds for a quiet machine before each run and
                       re-run a run that other processes disturbed (default 3 quick,
                       10 full; 0 = never)`

const PROFILES: Record<'quick' | 'full', { warmupMs: number; durationMs: number; quietWaitMs: number; tenants: number[]; data: DataShape }> = {
  quick: {
    tenants: [TENANT_COUNT],
    warmupMs: 1000,
    durationMs: 3000,
    quietWaitMs: 3000,
    data: { customersPerTenant: 320, productsPerTenant: 1000, hub10PerTenant: 16, hub1000PerTenant: 1, putIdSpace: 100_000 },
  },
  full: {
    tenants: [TENANT_COUNT, 1],
    warmupMs: 2000,
    durationMs: 10_000,
    quietWaitMs: 10_000,
    data: { customersPerTenant: 640, productsPerTenant: 1000, hub10PerTenant: 64, hub1000PerTenant: 4, putIdSpace: 100_000 },
  },
}

/** A number from 1 to `max` given to `flag`, or a usage error. */
export function positive(flag: string, raw: string | undefined, max: number): number {
  const n = Number(raw)
  if (raw === undefined || !Number.isFinite(n) || n <= 0 || n > max) throw new UsageError(`${flag} needs a number from 1 to ${max}`)
  return n
}

/** How a numeric flag of a small command sets its options: the option, its bound, and whether only its whole part counts. */
export interface NumberFlag<T> { key: keyof T; max: number; whole?: boolean }

/**
 * The options of a command whose flags all take a number (`positive`), from
 * `defaults`; `--help` and an unknown flag are usage errors.
 */
export function parseNumberFlags<T extends Record<string, number>>(argv: readonly string[], usage: string, defaults: T, flags: Readonly<Record<string, NumberFlag<T>>>): T {
  const o: T = { ...defaults }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--help' || arg === '-h') throw new UsageError(usage)
    const flag = flags[arg]
    if (flag === undefined) throw new UsageError(`unknown option ${arg}\n${usage}`)
    const n = positive(arg, argv[++i], flag.max)
    o[flag.key] = (flag.whole === true ? Math.floor(n) : n) as T[keyof T]
  }
  return o
}

/** `--tenants 1` or `--tenants 16,1`: each from 1 to the bench's tenant count. */
export function parseTenants(raw: string | undefined): number[] {
  const list = (raw ?? '').split(',').filter((x) => x !== '')
  if (list.length === 0) throw new UsageError(`--tenants needs a number from 1 to ${TENANT_COUNT}, or a list of them`)
  return list.map((x) => Math.floor(positive('--tenants', x, TENANT_COUNT)))
}

export function parseOptions(argv: readonly string[]): Options {
  const mode = argv.includes('--quick') ? 'quick' : 'full'
  const profile = PROFILES[mode]
  const o: Options = {
    mode,
    scale: argv.includes('--scale') ? { nodes: mode === 'quick' ? 100_000 : 1_000_000, relationsPerNode: 5, slices: 10 } : undefined,
    warmupMs: profile.warmupMs,
    durationMs: profile.durationMs,
    connections: 128,
    pipelining: 1,
    latencyConnections: 64,
    workers: 2,
    data: { ...profile.data },
    only: [],
    skipLatency: false,
    cpuProfDir: undefined,
    quietWaitMs: profile.quietWaitMs,
    tenants: [...profile.tenants],
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = (): string | undefined => argv[++i]
    switch (arg) {
      case '--quick': case '--scale': break
      case '--duration': o.durationMs = positive(arg, value(), 3600) * 1000; break
      case '--warmup': o.warmupMs = positive(arg, value(), 600) * 1000; break
      case '--connections': o.connections = Math.floor(positive(arg, value(), 4096)); break
      case '--pipelining': o.pipelining = Math.floor(positive(arg, value(), 1024)); break
      case '--workers': o.workers = Math.floor(positive(arg, value(), 64)); break
      case '--only': o.only = (value() ?? '').split(',').filter((s) => s !== ''); break
      case '--no-latency': o.skipLatency = true; break
      case '--tenants': o.tenants = parseTenants(value()); break
      case '--cpu-prof': {
        const dir = value()
        if (dir === undefined || dir.startsWith('--')) throw new UsageError('--cpu-prof needs a directory')
        o.cpuProfDir = dir
        break
      }
      case '--quiet-wait': {
        const raw = value()
        o.quietWaitMs = raw === '0' ? 0 : positive(arg, raw, 600) * 1000
        break
      }
      case '--help': case '-h': throw new UsageError(USAGE)
      default: throw new UsageError(`unknown option ${arg}\n${USAGE}`)
    }
  }
  return o
}
