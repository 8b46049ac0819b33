// The scenarios: what each stands for, the requests it sends, and its goal
// (ratio to the ceiling, from the issue). A scenario builds a fresh request
// source from a seed, so the service and the ceiling get the same sequence.
import {
  HUB10, HUB1000, TENANTS, TOKEN_PATH, counterPath, customerBody, customerName, neighboursPath, nodePath, searchPath,
  viewedBody, viewedPath, type TenantHeaders,
} from './fixture'
import type { BenchRequest, PoolShape } from './load'
import type { LatencyGoalKind } from './latency-goal'
import { UsageError, type DataShape } from './options'
import { pick, seeded, type Random } from './random'

export interface ScenarioContext {
  headers: readonly TenantHeaders[]
  data: DataShape
  /** How many tenants (the first N of TENANTS) the requests are spread over (--tenants). */
  tenants: number
}

export interface Scenario {
  name: string
  /** What it stands for in a real deployment. */
  stands: string
  /** Throughput goal as a ratio to the ceiling, when the issue sets one. */
  goal?: number
  /** Overrides the pass's connections and pipelining (said in the table). */
  shape?: PoolShape
  /** Runs in the 64-connection latency pass (single-element requests). */
  latency: boolean
  /** The open-loop p99 goal applies (latency-goal.ts): a read, or a durable write that waits for fdatasync. */
  latencyGoal?: LatencyGoalKind
  source(ctx: ScenarioContext, random: Random): () => BenchRequest
}

const BODY_POOL = 1024
const HOT_COUNTERS = 100

/** Pre-built bodies, so the generator does not pay a JSON.stringify per request. */
const putBodies = Array.from({ length: BODY_POOL }, (_, i) => customerBody(100_000 + i, `Writer ${i % 50}`))
const relationBodies = Array.from({ length: BODY_POOL }, (_, i) => viewedBody(i))

function putNode(ctx: ScenarioContext, random: Random, oneTenant: boolean, tenant?: number): BenchRequest {
  const n = pick(random, ctx.data.putIdSpace)
  const t = tenant ?? (oneTenant ? 0 : n % ctx.tenants)
  return { method: 'PUT', path: nodePath(TENANTS[t]!.id, 'customer', `w${n}`), headers: ctx.headers[t]!.write, body: putBodies[n % BODY_POOL] }
}

function getNode(ctx: ScenarioContext, random: Random, oneTenant = false): BenchRequest {
  const t = oneTenant ? 0 : pick(random, ctx.tenants)
  return { method: 'GET', path: nodePath(TENANTS[t]!.id, 'customer', `c${pick(random, ctx.data.customersPerTenant)}`), headers: ctx.headers[t]!.read }
}

function putRelation(ctx: ScenarioContext, random: Random): BenchRequest {
  const t = pick(random, ctx.tenants)
  const c = pick(random, ctx.data.customersPerTenant)
  const p = pick(random, ctx.data.productsPerTenant)
  return { method: 'PUT', path: viewedPath(TENANTS[t]!.id, `c${c}`, `p${p}`, 'r'), headers: ctx.headers[t]!.write, body: relationBodies[(c + p) % BODY_POOL] }
}

function counterSpread(ctx: ScenarioContext, random: Random): BenchRequest {
  const t = pick(random, ctx.tenants)
  const c = pick(random, ctx.data.customersPerTenant)
  const p = pick(random, ctx.data.productsPerTenant)
  return { method: 'POST', path: counterPath(TENANTS[t]!.id, `c${c}`, `p${p}`, 'spread'), headers: ctx.headers[t]!.post }
}

function counterHot(ctx: ScenarioContext, random: Random): BenchRequest {
  const k = pick(random, HOT_COUNTERS)
  const t = k % ctx.tenants
  return { method: 'POST', path: counterPath(TENANTS[t]!.id, `c${k}`, `p${k}`, 'hot'), headers: ctx.headers[t]!.post }
}

function listQ(ctx: ScenarioContext, random: Random): BenchRequest {
  const t = pick(random, ctx.tenants)
  return { method: 'GET', path: searchPath(TENANTS[t]!.id, customerName(pick(random, 1 << 20))), headers: ctx.headers[t]!.read }
}

function neighbours(ctx: ScenarioContext, random: Random, prefix: string, hubs: number, oneTenant = false): BenchRequest {
  const t = oneTenant ? 0 : pick(random, ctx.tenants)
  return { method: 'GET', path: neighboursPath(TENANTS[t]!.id, `${prefix}${pick(random, hubs)}`), headers: ctx.headers[t]!.read }
}

const TOKEN_BODY = 'grant_type=client_credentials'

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'get-node', goal: 0.5, latency: true, latencyGoal: 'read',
    stands: 'an app or enricher reading one profile node by id (random of the preloaded customers of the run\'s tenants)',
    source: (ctx, r) => () => getNode(ctx, r),
  },
  {
    name: 'get-node-1-tenant', latency: true,
    stands: 'the same reads all for one tenant: the hot-tenant read limit (one shard, read on every actor)',
    source: (ctx, r) => () => getNode(ctx, r, true),
  },
  {
    name: 'put-node', goal: 0.35, latency: true, latencyGoal: 'durable',
    stands: 'an enricher upserting a customer node: ~250-byte JSON body, random ids out of 100k over the run\'s tenants; acknowledged once durable',
    source: (ctx, r) => () => putNode(ctx, r, false),
  },
  {
    name: 'put-node-1-tenant', latency: true,
    stands: 'the same writes all for one tenant: the hot-tenant limit (one shard, one actor)',
    source: (ctx, r) => () => putNode(ctx, r, true),
  },
  {
    name: 'put-node-1-connection', latency: false, shape: { connections: 1, pipelining: 1 },
    stands: 'one enricher writing one customer node at a time: each write waits for its own fdatasync (the disk\'s sync is the floor)',
    source: (ctx, r) => () => putNode(ctx, r, false),
  },
  {
    name: 'put-node-8-connections', latency: false, shape: { connections: 8, pipelining: 1 },
    stands: 'a handful of enricher workers (the common case): little for group commit to share',
    source: (ctx, r) => () => putNode(ctx, r, false),
  },
  {
    name: 'put-relation', latency: true,
    stands: 'an enricher recording "customer viewed product" (relation upsert, both end nodes exist, most relations new)',
    source: (ctx, r) => () => putRelation(ctx, r),
  },
  {
    name: 'counter-hot', latency: true, latencyGoal: 'durable',
    stands: '100 hot counters (popular products) incremented by everyone: contention on the same records',
    source: (ctx, r) => () => counterHot(ctx, r),
  },
  {
    name: 'counter-spread', goal: 0.35, latency: true, latencyGoal: 'durable',
    stands: 'counters spread over customers x products: one increment per view event',
    source: (ctx, r) => () => counterSpread(ctx, r),
  },
  {
    name: 'counter-spread-1-connection', latency: false, shape: { connections: 1, pipelining: 1 },
    stands: 'one view-event consumer incrementing one counter at a time',
    source: (ctx, r) => () => counterSpread(ctx, r),
  },
  {
    name: 'counter-spread-8-connections', latency: false, shape: { connections: 8, pipelining: 1 },
    stands: 'a handful of view-event consumers',
    source: (ctx, r) => () => counterSpread(ctx, r),
  },
  {
    name: 'list-q', latency: false,
    stands: 'a single-criterion search q=name:"..." on the searchable name of core/customer (about 1/64 of a tenant\'s customers match)',
    source: (ctx, r) => () => listQ(ctx, r),
  },
  {
    name: 'neighbours-10', goal: 0.2, latency: false,
    stands: 'the consumption layer reading a customer\'s profile: a node with 10 neighbours',
    source: (ctx, r) => () => neighbours(ctx, r, HUB10, ctx.data.hub10PerTenant),
  },
  {
    name: 'neighbours-10-1-tenant', latency: false,
    stands: 'the same profile reads all for one tenant (one shard, read on every actor)',
    source: (ctx, r) => () => neighbours(ctx, r, HUB10, ctx.data.hub10PerTenant, true),
  },
  {
    name: 'neighbours-1000', latency: false, shape: { connections: 16, pipelining: 1 },
    stands: 'a heavy profile (degree 1000, ~0.5 MB streamed): streaming and back-pressure',
    source: (ctx, r) => () => neighbours(ctx, r, HUB1000, ctx.data.hub1000PerTenant),
  },
  {
    name: 'enricher-mix', latency: false,
    stands: 'an enricher fleet: 70% writes (30% put-node, 20% put-relation, 20% counter) and 30% reads (20% get-node, 7% neighbours-10, 3% list-q)',
    source: (ctx, r) => () => {
      const x = r()
      if (x < 0.3) return putNode(ctx, r, false)
      if (x < 0.5) return putRelation(ctx, r)
      if (x < 0.7) return counterSpread(ctx, r)
      if (x < 0.9) return getNode(ctx, r)
      if (x < 0.97) return neighbours(ctx, r, HUB10, ctx.data.hub10PerTenant)
      return listQ(ctx, r)
    },
  },
  {
    name: 'token', goal: 0.3, latency: false,
    stands: 'client-credentials token requests by clients whose secrets the server generated (admin API; stored and checked as SHA-256); each token is stored durably before it is answered',
    source: (ctx, r) => () => {
      const t = pick(r, ctx.tenants)
      return { method: 'POST', path: TOKEN_PATH, headers: ctx.headers[t]!.token, body: TOKEN_BODY }
    },
  },
]

/** A scenario sent as the lines of streamed bulk requests (bench/bulk-load.ts): one request per tenant of the pass, each fed its tenant's lines. */
export interface BulkScenario {
  name: string
  stands: string
  /** The single requests the lines stand for, all of tenant number `tenant`. */
  lines(ctx: ScenarioContext, tenant: number, random: Random): () => BenchRequest
}

export const BULK_SCENARIOS: readonly BulkScenario[] = [
  {
    name: 'bulk-put-node',
    stands: 'an enricher ingesting a stream of events through one bulk connection per tenant: put-node\'s upserts as NDJSON lines, each answered once durable',
    lines: (ctx, t, r) => () => putNode(ctx, r, false, t),
  },
]

function checkKnown(only: readonly string[]): void {
  const known = [...SCENARIOS, ...BULK_SCENARIOS].map((s) => s.name)
  const unknown = only.filter((n) => !known.includes(n))
  if (unknown.length > 0) throw new UsageError(`unknown scenario(s): ${unknown.join(', ')}; known: ${known.join(', ')}`)
}

export function selectScenarios(only: readonly string[]): Scenario[] {
  if (only.length === 0) return [...SCENARIOS]
  checkKnown(only)
  return SCENARIOS.filter((s) => only.includes(s.name))
}

export function selectBulkScenarios(only: readonly string[]): BulkScenario[] {
  if (only.length === 0) return [...BULK_SCENARIOS]
  checkKnown(only)
  return BULK_SCENARIOS.filter((s) => only.includes(s.name))
}

export const scenarioSeed = (name: string): number => [...name].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 0x01000193), 0x811c9dc5)

export const sourceFor = (s: Scenario, ctx: ScenarioContext): (() => BenchRequest) => s.source(ctx, seeded(scenarioSeed(s.name)))

/** Tenant `tenant`'s line source of a bulk scenario, seeded per tenant. */
export const bulkSourceFor = (s: BulkScenario, ctx: ScenarioContext, tenant: number): (() => BenchRequest) => s.lines(ctx, tenant, seeded(scenarioSeed(s.name) + tenant))
