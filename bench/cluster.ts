// `node dist/bench/cluster.js [--cluster-durability local|quorum] [--quick] [options of npm run bench]`: the cost
// of cluster mode. In one run, on this machine:
//  1. the single-host mode (the server as `npm run bench` starts it),
//  2. three JetStream nats-servers on loopback and two hosts in cluster mode
//     (bench/nats-local.ts, bench/cluster-hosts.ts), the load split over both
//     hosts as a load balancer would,
// each loaded with the same data set, then every scenario of `npm run bench`
// (closed loop, same connections, warm-up and duration), and the write rate
// of one sequential client on one shard (one connection, one request at a
// time, all to tenant bench-t00). Prints cluster/single for each and writes
// bench/results/<ISO date>-cluster.json. No ceiling and no open-loop pass:
// `npm run bench` measures those; this measures the ratio.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { shardOf } from '../src/shards/tenant-hash'
import type { Child } from './child'
import { runCleanups, runMain } from './cleanup'
import { startClusterHosts, SHARDS } from './cluster-hosts'
import { CLUSTER_DURABILITIES, type ClusterDurability } from '../src/config/cluster-options'
import { TENANTS } from './fixture'
import { runLoad, type LoadResult } from './load'
import { startLocalNats } from './nats-local'
import { readCommandLine } from './command-line'
import type { Options } from './options'
import { preload } from './preload'
import { readLoadAverage } from './proc'
import { seeded } from './random'
import { writeJson } from './report'
import { ROOT, prepareService, startService, tempDir } from './service'
import { SCENARIOS, scenarioSeed, type Scenario, type ScenarioContext } from './scenarios'
import { fetchCredentials } from './tokens'
import { turnOffPretenuring } from '../src/start/v8-heap'

const log = (line: string): void => console.log(line)

/** One scenario's result over every origin it was sent to. */
interface Row {
  okRps: number
  p50: number
  p99: number
  non2xx: number
  errors: number
  statuses: Record<string, number>
}

interface ModeResult {
  loadAverageAtStart: string
  load: { phase: string; rate: number }[]
  scenarios: Record<string, Row>
  /** One client, one connection, one write at a time, all on tenant bench-t00's shard; in the cluster through its owner and through the other host. */
  sequential: Record<string, Row>
}

/**
 * The scenario through every origin at once, the connections split evenly
 * (a load balancer in front of the hosts); each origin gets its own seed, so
 * the hosts do not receive the same requests at the same moment. Rates add
 * up; the latency reported is the worse origin's.
 */
async function runSplit(origins: readonly string[], s: Scenario, ctx: ScenarioContext, o: Options, connections: number): Promise<Row> {
  const per = Math.max(1, Math.floor(connections / origins.length))
  const results: LoadResult[] = await Promise.all(origins.map((origin, i) => runLoad({
    origin, connections: per, pipelining: 1, warmupMs: o.warmupMs, durationMs: o.durationMs, next: s.source(ctx, seeded(scenarioSeed(s.name) + i)),
  })))
  const statuses: Record<string, number> = {}
  for (const r of results) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v
  return {
    okRps: results.reduce((n, r) => n + r.okRps, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
    errors: results.reduce((n, r) => n + r.errors, 0),
    statuses,
  }
}

const rowLine = (label: string, r: Row): string =>
  `    ${label.padEnd(24)} ${Math.round(r.okRps).toString().padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms${r.non2xx + r.errors > 0 ? `  non-2xx ${r.non2xx} errors ${r.errors} ${JSON.stringify(r.statuses)}` : ''}`

/** Loads the data set through `origins[0]`, then runs every scenario and the sequential writer. */
async function measureMode(label: string, origins: readonly string[], sequentialOrigins: Record<string, string>, o: Options, scenarios: readonly Scenario[]): Promise<ModeResult> {
  const loadAverageAtStart = readLoadAverage()
  const credentials = await fetchCredentials(origins[0]!)
  const d = o.data
  log(`${label}: loading ${TENANTS.length} tenants x (${d.productsPerTenant} products, ${d.customersPerTenant} customers, hubs) through ${origins[0]}`)
  const load = (await preload(origins[0]!, d, credentials.headers, log)).map((p) => ({ phase: p.phase, rate: p.rate }))
  const ctx: ScenarioContext = { headers: credentials.headers, data: d, tenants: o.tenants[0]! }
  const out: Record<string, Row> = {}
  log(`${label}: ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s per scenario, ${ctx.tenants} tenant(s), ${origins.length} host(s)`)
  for (const s of scenarios) {
    const row = await runSplit(origins, s, ctx, o, s.shape?.connections ?? o.connections)
    out[s.name] = row
    log(rowLine(s.name, row))
  }
  const sequential: Record<string, Row> = {}
  const oneTenant = SCENARIOS.find((s) => s.name === 'put-node-1-tenant')!
  for (const [via, origin] of Object.entries(sequentialOrigins)) {
    const row = await runSplit([origin], oneTenant, ctx, o, 1)
    sequential[via] = row
    log(rowLine(`sequential writer ${via}`, row))
  }
  return { loadAverageAtStart, load, scenarios: out, sequential }
}

const ratio = (c: number, s: number): string => (s > 0 ? (c / s).toFixed(2) : 'n/a')

function table(single: ModeResult, cluster: ModeResult): string {
  const lines = [
    '| scenario | single req/s | cluster req/s | cluster/single | single p99 ms | cluster p99 ms |',
    '|---|---:|---:|---:|---:|---:|',
  ]
  for (const [name, s] of Object.entries(single.scenarios)) {
    const c = cluster.scenarios[name]
    if (c === undefined) continue
    const fail = c.non2xx + c.errors > 0 ? ` (non-2xx ${c.non2xx}, errors ${c.errors})` : ''
    lines.push(`| ${name} | ${Math.round(s.okRps)} | ${Math.round(c.okRps)}${fail} | ${ratio(c.okRps, s.okRps)} | ${s.p99} | ${c.p99} |`)
  }
  lines.push('', '| one sequential writer, one shard | writes/s | p50 ms | p99 ms |', '|---|---:|---:|---:|')
  for (const [via, r] of [...Object.entries(single.sequential).map(([k, v]) => [`single host (${k})`, v] as const), ...Object.entries(cluster.sequential).map(([k, v]) => [`cluster, ${k}`, v] as const)]) {
    lines.push(`| ${via} | ${Math.round(r.okRps)} | ${r.p50} | ${r.p99} |`)
  }
  lines.push('', '| data load | single/s | cluster/s | cluster/single |', '|---|---:|---:|---:|')
  for (const [i, p] of single.load.entries()) {
    const c = cluster.load[i]
    if (c !== undefined) lines.push(`| ${p.phase} | ${Math.round(p.rate)} | ${Math.round(c.rate)} | ${ratio(c.rate, p.rate)} |`)
  }
  return lines.join('\n')
}

/** `--cluster-durability local|quorum` (default local), given to the cluster's hosts; the rest are `npm run bench`'s options. */
function takeDurability(argv: string[]): { durability: ClusterDurability | undefined; rest: string[] } {
  const at = argv.indexOf('--cluster-durability')
  if (at < 0) return { durability: 'local', rest: argv }
  const value = argv[at + 1]
  const durability = CLUSTER_DURABILITIES.find((d) => d === value)
  if (durability === undefined) console.error(`--cluster-durability must be one of ${CLUSTER_DURABILITIES.join(', ')}, got "${value ?? ''}"`)
  return { durability, rest: [...argv.slice(0, at), ...argv.slice(at + 2)] }
}

async function main(): Promise<number> {
  // The same V8 setting as the service's threads (src/start/v8-heap.ts).
  turnOffPretenuring()
  const { durability, rest } = takeDurability(process.argv.slice(2))
  if (durability === undefined) return 2
  const command = readCommandLine(rest)
  if (command === undefined) return 2
  const { o } = command
  let { scenarios } = command
  // One pass: the first --tenants entry (16 unless given); with one tenant the -1-tenant twins are the same.
  if (o.tenants[0] === 1) scenarios = scenarios.filter((s) => !s.name.endsWith('-1-tenant'))
  const started = new Date()
  const tmp = tempDir('graph-bench-cluster-')
  const children: Child[] = []
  try {
    const singleDir = join(tmp, 'single')
    mkdirSync(singleDir)
    const single = await startService(prepareService(singleDir), o.workers)
    children.push(single)
    log(`single host at ${single.url}`)
    const singleResult = await measureMode('single host', [single.url], { 'one host': single.url }, o, scenarios)
    await single.stop()

    const natsDir = join(tmp, 'nats')
    mkdirSync(natsDir)
    const nats = await startLocalNats(natsDir)
    log(`three nats-servers at ${nats.urls.join(', ')}`)
    const clusterDir = join(tmp, 'cluster')
    mkdirSync(clusterDir)
    const hosts = await startClusterHosts(clusterDir, prepareService(clusterDir), nats.urls, o.workers, { durability })
    children.push(...hosts.hosts)
    log(`two hosts at ${hosts.hosts.map((h) => h.url).join(', ')}; shard owners ${JSON.stringify(hosts.owners)}`)
    const shard = shardOf(TENANTS[0]!.id, SHARDS)
    const ownerIndex = hosts.owners[shard] === 'host1' ? 0 : 1
    const sequentialVia = {
      [`through the shard's owner (${hosts.owners[shard]})`]: hosts.hosts[ownerIndex]!.url,
      'through the other host (forwarded)': hosts.hosts[1 - ownerIndex]!.url,
    }
    const clusterResult = await measureMode('cluster', hosts.hosts.map((h) => h.url), sequentialVia, o, scenarios)
    await hosts.stop()
    await nats.stop()

    const doc = {
      date: started.toISOString(), command: `node dist/bench/cluster.js ${process.argv.slice(2).join(' ')}`.trim(),
      settings: { clusterDurability: durability, warmupS: o.warmupMs / 1000, durationS: o.durationMs / 1000, connections: o.connections, workers: o.workers, tenants: o.tenants[0], data: o.data },
      single: singleResult, cluster: clusterResult,
      notes: [
        'cluster: three nats-servers (R3 streams, loopback) and two hosts on the same machine as the single host and the load generator; the load is split evenly over both hosts.',
        'latency columns: the worse of the two hosts\' p99 in the cluster.',
      ],
    }
    const file = writeJson(join(ROOT, 'bench', 'results'), doc.date, 'cluster', doc)
    log('')
    log(table(singleResult, clusterResult))
    log('')
    log(`results: ${file}`)
    return 0
  } finally {
    await Promise.all(children.map((c) => c.stop()))
    await runCleanups()
  }
}

runMain(main)
