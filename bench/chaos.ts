// `node dist/bench/chaos.js [--runs N] [--lease-ms 3000] [--only a,b]`: the
// cluster's failure scenarios on this machine's loopback (three nats-servers,
// three hosts, bench/nats-local.ts and bench/cluster-hosts.ts), each run N
// times under a write load of 32 requests in flight spread over the live
// hosts. Per scenario it prints the worst and median recovery time (fault
// until every live host serves every shard) beside the goal, the 503s and
// other non-204 answers of the load, and the acknowledged writes lost (every
// one is read back after each run: must be 0); where the victim host comes
// back, the 503s after its return (must be 0) and whether placement settled
// within two lease periods and a margin (bench/chaos-goals.ts); writes
// bench/results/<ISO date>-chaos.json.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import { leaseBucket } from '../src/replication/lease-bucket'
import { shardOf } from '../src/shards/tenant-hash'
import { CHAOS_SCENARIOS, type ChaosCluster, type ChaosScenario, type FaultResult } from './chaos-scenarios'
import { lostWrites, startWriteLoad, type Statuses, type Target } from './chaos-load'
import { recoveryMs } from './chaos-probe'
import { rejoinMissed, settleGoalMs } from './chaos-goals'
import { parseChaosOptions } from './chaos-options'
import { runCleanups, runMain } from './cleanup'
import { SHARDS, isPlaced, preferredOwners, shardOwners, startClusterHosts } from './cluster-hosts'
import { parseOrUsage } from './command-line'
import { TENANTS, type Tenant } from './fixture'
import { startLocalNats } from './nats-local'
import { readLoadAverage } from './proc'
import { writeJson } from './report'
import { ROOT, prepareService, tempDir } from './service'
import { tenantCredentials } from './tokens'
import { sleep } from './wait'

const IN_FLIGHT = 32
/** The load runs this long before each fault, so that the fault hits a busy cluster. */
const WARM_MS = 2000
/** How long after the victim is back placement may take to settle before the next run starts anyway (reported as never). */
const SETTLE_GIVE_UP_MS = 60_000

interface RunRecord {
  victim: string
  recoveryMs: number | undefined
  extra: Record<string, number | undefined>
  /** Ms from the victim's return until every shard's lease named its preferred host. */
  settledMs: number | undefined
  /** Each shard's owner when the wait for placement gave up (only then). */
  ownersWhenGivenUp?: (string | undefined)[]
  /** The load's answers other than 204, by phase (before, fault, restore). */
  others: Record<string, Statuses>
  tokenStatuses?: Statuses
  acknowledged: number
  lost: number
  /** What a rejoin missed of its goals (rejoining scenarios only). */
  rejoinMissed?: string[]
}

/** The first tenant of each shard: the load and the probes cover every shard. */
function tenantPerShard(): Tenant[] {
  return Array.from({ length: SHARDS }, (_, s) => {
    const t = TENANTS.find((x) => shardOf(x.id, SHARDS) === s)
    if (t === undefined) throw new Error(`no bench tenant falls on shard ${s}`)
    return t
  })
}

const sum = (statuses: readonly Statuses[], keep: (status: number) => boolean): number =>
  statuses.reduce((n, s) => n + Object.entries(s).reduce((m, [k, v]) => m + (keep(Number(k)) ? v : 0), 0), 0)
const ms = (v: number | undefined): string => (v === undefined ? 'never' : `${v} ms`)

/** Worst and median of the runs' values; a run that never recovered counts as the worst. */
function worstAndMedian(values: readonly (number | undefined)[]): { worst: number | undefined; median: number | undefined } {
  const sorted = values.map((v) => v ?? Infinity).sort((a, b) => a - b)
  const finite = (v: number | undefined): number | undefined => (v === undefined || v === Infinity ? undefined : v)
  return { worst: finite(sorted[sorted.length - 1]), median: finite(sorted[Math.floor((sorted.length - 1) / 2)]) }
}

/** One run: load, fault, recovery, restore, placement, read-back. */
async function runOnce(c: ChaosCluster, s: ChaosScenario, run: number): Promise<RunRecord> {
  const load = startWriteLoad(() => [...c.live].map((n) => c.origin(n)), c.targets, IN_FLIGHT, `chaos-${s.name}-${run}`)
  load.phase = 'before'
  let result: FaultResult
  let settledMs: number | undefined
  let ownersWhenGivenUp: (string | undefined)[] | undefined
  try {
    await sleep(WARM_MS)
    load.phase = 'fault'
    result = await s.fault(c)
    load.phase = 'restore'
    await result.restore()
    const back = Date.now()
    settledMs = await recoveryMs(back, () => isPlaced(c.kv, c.hosts.nodes), SETTLE_GIVE_UP_MS)
    if (settledMs === undefined) ownersWhenGivenUp = await shardOwners(c.kv)
  } finally {
    await load.stop()
  }
  const lost = await lostWrites(c.hosts.nodes.map((n) => c.origin(n)), c.targets, load.acknowledged)
  return {
    victim: result.victim, recoveryMs: result.recoveryMs, extra: result.extra, settledMs,
    ...(ownersWhenGivenUp === undefined ? {} : { ownersWhenGivenUp }), others: load.others,
    ...(s.rejoins ? { rejoinMissed: rejoinMissed({ settledMs, others: load.others }, c.leaseMs) } : {}),
    ...(result.tokenStatuses === undefined ? {} : { tokenStatuses: result.tokenStatuses }),
    acknowledged: load.acknowledged.length, lost,
  }
}

function runLine(s: ChaosScenario, run: number, runs: number, c: ChaosCluster, r: RunRecord): string {
  const all = Object.values(r.others)
  const extra = Object.entries(r.extra).map(([k, v]) => `, ${k} ${ms(v)}`).join('')
  const tokens = r.tokenStatuses === undefined ? '' : `, token answers ${JSON.stringify(r.tokenStatuses)}`
  return `${s.name} ${run}/${runs}: ${r.victim} hit, recovery ${ms(r.recoveryMs)} (goal ${s.goalMs(c.leaseMs)} ms)${extra}, placement settled ${ms(r.settledMs)} after its return${r.ownersWhenGivenUp === undefined ? '' : ` (shard owners then ${JSON.stringify(r.ownersWhenGivenUp)}, preferred ${JSON.stringify(preferredOwners(c.hosts.nodes))})`}; `
    + `load: ${r.acknowledged} acknowledged, 503 ${sum(all, (x) => x === 503)}, other non-204 ${sum(all, (x) => x !== 503 && x !== 0)}, no answer ${sum(all, (x) => x === 0)} `
    + `${JSON.stringify(r.others)}${tokens}; lost ${r.lost}`
    + (r.rejoinMissed === undefined ? '' : r.rejoinMissed.length === 0 ? '; rejoin goals met' : `; REJOIN GOALS MISSED: ${r.rejoinMissed.join(', ')}`)
}

interface Summary {
  scenario: string
  runs: number
  goalMs: number
  worstMs: number | undefined
  medianMs: number | undefined
  withinGoal: number
  extra: Record<string, { worst: number | undefined; median: number | undefined }>
  status503: number
  otherNon204: number
  noAnswer: number
  tokenNon200?: number
  acknowledged: number
  lost: number
  /** 503s after the victim's return, and runs whose placement settled within settleGoalMs (rejoining scenarios). */
  rejoin?: { status503: number; settledWithin: number; settleGoalMs: number }
}

function summarize(s: ChaosScenario, leaseMs: number, runs: readonly RunRecord[]): Summary {
  const goalMs = s.goalMs(leaseMs)
  const all = runs.flatMap((r) => Object.values(r.others))
  const extraNames = [...new Set(runs.flatMap((r) => Object.keys(r.extra)))]
  const tokens = runs.flatMap((r) => (r.tokenStatuses === undefined ? [] : [r.tokenStatuses]))
  const recovery = worstAndMedian(runs.map((r) => r.recoveryMs))
  return {
    scenario: s.name, runs: runs.length, goalMs, worstMs: recovery.worst, medianMs: recovery.median,
    withinGoal: runs.filter((r) => r.recoveryMs !== undefined && r.recoveryMs <= goalMs).length,
    extra: Object.fromEntries([...extraNames.map((k) => [k, worstAndMedian(runs.map((r) => r.extra[k]))] as const), ['settledMs', worstAndMedian(runs.map((r) => r.settledMs))] as const]),
    status503: sum(all, (x) => x === 503), otherNon204: sum(all, (x) => x !== 503 && x !== 0), noAnswer: sum(all, (x) => x === 0),
    ...(tokens.length === 0 ? {} : { tokenNon200: sum(tokens, (x) => x !== 200) }),
    acknowledged: runs.reduce((n, r) => n + r.acknowledged, 0), lost: runs.reduce((n, r) => n + r.lost, 0),
    ...(s.rejoins ? { rejoin: {
      status503: sum(runs.map((r) => r.others['restore'] ?? {}), (x) => x === 503),
      settledWithin: runs.filter((r) => r.settledMs !== undefined && r.settledMs <= settleGoalMs(leaseMs)).length,
      settleGoalMs: settleGoalMs(leaseMs),
    } } : {}),
  }
}

function table(rows: readonly Summary[]): string {
  const lines = [
    `| scenario | runs | worst recovery | median | goal | within goal | 503s | other non-204 | no answer | acknowledged | lost | also (worst / median) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ]
  for (const r of rows) {
    const also = [
      ...Object.entries(r.extra).map(([k, v]) => `${k} ${ms(v.worst)} / ${ms(v.median)}`),
      ...(r.tokenNon200 === undefined ? [] : [`token answers other than 200: ${r.tokenNon200}`]),
      ...(r.rejoin === undefined ? [] : [`after the return: ${r.rejoin.status503} 503s, settled within ${r.rejoin.settleGoalMs} ms ${r.rejoin.settledWithin}/${r.runs}`]),
    ].join('; ')
    lines.push(`| ${r.scenario} | ${r.runs} | ${ms(r.worstMs)} | ${ms(r.medianMs)} | ${r.goalMs} ms | ${r.withinGoal}/${r.runs} | ${r.status503} | ${r.otherNon204} | ${r.noAnswer} | ${r.acknowledged} | ${r.lost} | ${also} |`)
  }
  return lines.join('\n')
}

async function main(): Promise<number> {
  const o = parseOrUsage(() => parseChaosOptions(process.argv.slice(2), CHAOS_SCENARIOS.map((s) => s.name)))
  if (o === undefined) return 2
  const scenarios = CHAOS_SCENARIOS.filter((s) => o.only.length === 0 || o.only.includes(s.name))
  const started = new Date()
  const loadAverageAtStart = readLoadAverage()
  const tmp = tempDir('graph-bench-chaos-')
  const records: Record<string, RunRecord[]> = {}
  let failure: string | undefined
  try {
    const natsDir = join(tmp, 'nats')
    mkdirSync(natsDir)
    const nats = await startLocalNats(natsDir)
    console.log(`three nats-servers at ${nats.urls.join(', ')}`)
    const clusterDir = join(tmp, 'cluster')
    mkdirSync(clusterDir)
    const hosts = await startClusterHosts(clusterDir, prepareService(clusterDir), nats.urls, o.workers, { count: 3, leaseMs: o.leaseMs })
    const urls = hosts.hosts.map((h) => h.url)
    console.log(`three hosts at ${urls.join(', ')}, lease ${o.leaseMs} ms; shard owners ${JSON.stringify(hosts.owners)}`)
    const nc = await connect({ servers: nats.urls, maxReconnectAttempts: -1 })
    try {
      const tenants = tenantPerShard()
      const { headers } = await tenantCredentials(urls[0]!, tenants)
      const c: ChaosCluster = {
        nats, hosts, kv: await leaseBucket(nc, nats.urls.length), leaseMs: o.leaseMs,
        targets: tenants.map((tenant, i): Target => ({ tenant, headers: headers[i]! })),
        live: new Set(hosts.nodes),
        origin: (node) => urls[hosts.nodes.indexOf(node)]!,
      }
      for (const s of scenarios) {
        const runs: RunRecord[] = (records[s.name] = [])
        for (let run = 1; run <= o.runs; run++) {
          const r = await runOnce(c, s, run)
          runs.push(r)
          console.log(runLine(s, run, o.runs, c, r))
        }
      }
    } finally {
      await nc.close()
    }
  } catch (err) {
    // What ran so far is still reported and written.
    failure = err instanceof Error ? err.stack ?? err.message : String(err)
    console.error(failure)
  } finally {
    await runCleanups()
  }
  const summaries = scenarios.filter((s) => (records[s.name]?.length ?? 0) > 0).map((s) => summarize(s, o.leaseMs, records[s.name]!))
  const doc = {
    date: started.toISOString(), command: `node dist/bench/chaos.js ${process.argv.slice(2).join(' ')}`.trim(),
    settings: { runs: o.runs, leaseMs: o.leaseMs, workers: o.workers, inFlight: IN_FLIGHT, hosts: 3, natsServers: 3 },
    loadAverageAtStart, summaries, runs: records, ...(failure === undefined ? {} : { failure }),
    notes: [
      'recovery: ms from the fault until every live host answered a read (200 or 404) for every shard, probed every 100 ms.',
      'goal: 2 x lease + 2 s; + 9 s where a NATS server died (kill-meta-leader).',
      'rejoin (kill-owner, wipe-host, kill-auth-owner): no 503 in the restore phase, placement settled within 2 x lease + 2 s of the return.',
      'everything (three nats-servers, three hosts, the load) on one machine\'s loopback.',
    ],
  }
  const file = writeJson(join(ROOT, 'bench', 'results'), doc.date, 'chaos', doc)
  console.log('')
  console.log(table(summaries))
  console.log('')
  console.log(`results: ${file}`)
  const rejoinsMet = Object.values(records).every((runs) => runs.every((r) => (r.rejoinMissed ?? []).length === 0))
  return failure === undefined && rejoinsMet && summaries.every((s) => s.lost === 0) ? 0 : 1
}

runMain(main)
