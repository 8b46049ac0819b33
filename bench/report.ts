// The results of a run: the JSON written to bench/results/ and the markdown
// tables printed at the end (the latest in bench/README.md, every dated run
// in bench/MEASUREMENTS.md).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CommitPipeline } from './commit-stats'
import { fsyncLine, type FsyncProbeResult } from './fsync-probe'
import type { LatencySummary } from './histogram'
import { P99_AT_50_MS, P99_AT_75_MS, verdictText, type GoalVerdict, type LatencyGoalKind } from './latency-goal'
import type { LoadResult } from './load'
import type { ProbeResult } from './pipelining-probe'
import type { PhaseReport } from './preload'

export interface Measured {
  rps: number
  okRps: number
  latency: LatencySummary
  completed: number
  windowS: number
  statuses: Record<string, number>
  non2xx: number
  errors: number
  errorMessages: Record<string, number>
  non2xxSamples: string[]
  unfinished: number
  bytesIn: number
  /** CPU of the target process (all threads) during the window, in cores. */
  targetCores: number
  /** CPU of the load generator during the window, in cores. */
  generatorCores: number
  /** CPU used by everything else on the machine during the window (noise), in cores. */
  otherCores: number
  /** Peak RssAnon of the target process during the run, MB. */
  peakRssAnonMb: number
  /** CPU microseconds of the target's main thread (the service's front thread) per completed request in the window. */
  frontCpuUsPerRequest: number
  /** The service's shard actors in the window (bench/commit-stats.ts). */
  pipeline?: CommitPipeline
}

export interface ScenarioResult {
  name: string
  /** Tenants the requests were spread over. */
  tenants: number
  stands: string
  connections: number
  pipelining: number
  service: Measured
  ceiling: Measured
  /** service 2xx rate / ceiling 2xx rate */
  ratio: number
  goal: number | undefined
}

/** A bulk scenario of one pass: the service only, one streamed request per tenant (bench/bulk-load.ts). */
export interface BulkScenarioResult {
  name: string
  tenants: number
  stands: string
  /** One bulk request per tenant. */
  connections: number
  /** Rates and latencies count lines, not requests. */
  service: Measured
  /** CPU microseconds of the busiest actor thread per line answered. */
  actorUsPerLine: number | undefined
  /** Against the same pass's single-request put-node. */
  vsSingle: { scenario: string; connections: number; ratio: number } | undefined
}

/** One fixed-rate run of the open-loop pass (the service only). */
export interface OpenLoopRun {
  /** Of the scenario's closed-loop maximum (service 2xx req/s of the throughput pass). */
  fraction: number
  ratePerS: number
  service: Measured
  scheduled: number
  sent: number
  sendLagP99Ms: number
  sendLagMaxMs: number
  keptSchedule: boolean
  /** At 50% and 75% for the scenarios the goal applies to. */
  verdict: GoalVerdict | undefined
}

/** The open-loop generator against the ceiling at the pass's highest rate: does it keep its schedule on its own? */
export interface GeneratorCheck {
  scenario: string
  tenants: number
  ratePerS: number
  ceiling: Measured
  sendLagP99Ms: number
  keptSchedule: boolean
}

export interface OpenLoopScenario {
  name: string
  tenants: number
  connections: number
  maxRps: number
  latencyGoal: LatencyGoalKind | undefined
  runs: OpenLoopRun[]
}

export interface Machine {
  cpus: number
  cpuModel: string
  memoryGb: number
  node: string
  platform: string
}

export interface RunResults {
  date: string
  mode: string
  command: string
  machine: Machine
  settings: { warmupS: number; durationS: number; connections: number; pipelining: number; latencyConnections: number; workers: number; tenants: number[] }
  data: { customers: number; products: number; hub10: number; hub1000: number; putIdSpace: number; tenants: number }
  load: PhaseReport[]
  throughput: ScenarioResult[]
  /** Absent in results written before the bulk scenarios. */
  bulk?: BulkScenarioResult[]
  openLoop: OpenLoopScenario[]
  generatorChecks: GeneratorCheck[]
  /** The disk's own write + fdatasync latency, probed in the data directory's filesystem before the service started. */
  fsync: FsyncProbeResult
  memory: { servicePeakRssAnonMb: number; servicePeakRssFileMb: number; ceilingPeakRssAnonMb: number }
  dataDirMb: number
  ceilingBodiesCaptured: string[]
  /** Two pipelined GETs (get-node) sent in one write to each target. */
  pipeliningProbe: { service: ProbeResult; ceiling: ProbeResult }
  /** Consent references: issued by POST /{tenant}/consents, or fixed (the service has no consents API yet). */
  consentReferences: 'issued' | 'fixed'
  /** The commit the service was built from, and whether src/ or workers/ had uncommitted changes. */
  serviceVersion: string
  /** /proc/loadavg when the run started. */
  loadAverageAtStart: string
  notes: string[]
}

export function measured(r: LoadResult, cpu: { targetCores: number; otherCores: number; frontCpuUsPerRequest: number }, peakRssAnonMb: number): Measured {
  return {
    rps: r.rps, okRps: r.okRps, latency: r.latency, completed: r.completed, windowS: r.windowS, statuses: r.statuses,
    non2xx: r.non2xx, errors: r.errors, errorMessages: r.errorMessages, non2xxSamples: r.non2xxSamples,
    unfinished: r.unfinished, bytesIn: r.bytesIn, ...cpu, generatorCores: r.generatorCores, peakRssAnonMb,
  }
}

const int = (n: number): string => String(Math.round(n))
const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2))
const ratio = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-')
const cores = (n: number): string => n.toFixed(2)
const us = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-')
const pct = (f: number): string => `${Math.round(f * 100)}%`

/** CPU other processes used during the service's / the ceiling's window: above ~0.2 cores the row is disturbed. */
const other = (a: Measured, b: Measured): string => `${a.otherCores.toFixed(2)} / ${b.otherCores.toFixed(2)}`

function failures(m: Measured): string {
  const parts = [`${m.non2xx}`, `${m.errors}`]
  if (m.unfinished > 0) parts.push(`${m.unfinished} unfinished`)
  return parts.join(' / ')
}

function goalCell(r: ScenarioResult): string {
  if (r.goal === undefined) return ''
  return `${r.goal.toFixed(2)} ${r.ratio >= r.goal ? 'met' : 'missed'}`
}

/** The bulk rows: lines per second, per-line latency from hand-over to answer, actor CPU per line, and the ratio to single-request put-node. */
function bulkMarkdown(rows: readonly BulkScenarioResult[]): string[] {
  const out = [
    'Bulk writes (the service only; one streamed bulk request per tenant; a line\'s latency runs from its hand-over to the request body to its answer):',
    '',
    '| scenario | tenants | lines/s | p50 ms | p99 ms | non-2xx / errors | service CPU | actor µs/line | vs single put-node | other CPU |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const r of rows) {
    const s = r.service
    const vs = r.vsSingle === undefined ? '-' : `${ratio(r.vsSingle.ratio)}x ${r.vsSingle.scenario} (${r.vsSingle.connections} conns)`
    out.push(`| ${r.name} | ${r.tenants} | ${int(s.okRps)} | ${ms(s.latency.p50)} | ${ms(s.latency.p99)} | ${failures(s)} | ${cores(s.targetCores)} | ${us(r.actorUsPerLine ?? Number.NaN)} | ${vs} | ${s.otherCores.toFixed(2)} |`)
  }
  return out
}

/** Where a durable write's disk time goes, per write scenario: group commits, syncs and bytes, beside the fsync probe above. */
function durabilityMarkdown(rows: readonly ScenarioResult[]): string[] {
  const writes = rows.filter((r) => r.service.pipeline?.writesPerCommit !== undefined)
  if (writes.length === 0) return []
  const n = (x: number | undefined, digits = 0): string => (x === undefined ? '' : x.toFixed(digits))
  return [
    'Durable writes (the service\'s own /metrics, /proc/<pid>/io and the data directory\'s block device over each window): writes per group commit, the shard journals\' fdatasyncs and LMDB\'s checkpoint syncs per second, and per answered request the bytes the service passed to write calls and the bytes written to the device (by anything on the machine):',
    '',
    '| scenario | tenants | conns | service req/s | writes / commit | journal fdatasyncs/s | LMDB syncs/s | bytes written / request | device bytes / request |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...writes.map((r) => {
      const p = r.service.pipeline!
      return `| ${r.name} | ${r.tenants} | ${r.connections} | ${int(r.service.okRps)} | ${n(p.writesPerCommit, 1)} | ${n(p.journalSyncsPerSecond)} | ${n(p.lmdbSyncsPerSecond, 1)} | ${n(p.writtenBytesPerRequest)} | ${n(p.deviceBytesPerRequest)} |`
    }),
  ]
}

export function markdown(res: RunResults): string {
  const lines: string[] = []
  lines.push(`### ${res.mode} run, ${res.date}`)
  lines.push('')
  lines.push(`Machine: ${res.machine.cpus} cores (${res.machine.cpuModel}), ${res.machine.memoryGb} GB, Node ${res.machine.node}, ${res.machine.platform}. `
    + `Server: --workers ${res.settings.workers}. Each run: ${res.settings.warmupS} s warm-up + ${res.settings.durationS} s measured. `
    + `Data: ${res.data.tenants} tenants, ${res.data.customers} customers, ${res.data.products} products, `
    + `${res.data.hub10} hubs of degree 10, ${res.data.hub1000} of degree 1000.`)
  lines.push('')
  lines.push(`Throughput (default ${res.settings.connections} connections x pipelining ${res.settings.pipelining}; the ceiling gets the same requests, connections, pipelining and duration):`)
  lines.push('')
  lines.push('"front µs/req": CPU microseconds of the main thread (the service\'s front thread, the ceiling\'s only thread) per answered request in the window.')
  lines.push('')
  lines.push('| scenario | tenants | conns x pipe | service req/s | p50 ms | p99 ms | p99.9 ms | non-2xx / errors | service CPU | front µs/req | ceiling req/s | ceiling p99 ms | ceiling µs/req | ratio | goal | other CPU |')
  lines.push('|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---:|')
  for (const r of res.throughput) {
    const s = r.service
    lines.push(`| ${r.name} | ${r.tenants} | ${r.connections} x ${r.pipelining} | ${int(s.okRps)} | ${ms(s.latency.p50)} | ${ms(s.latency.p99)} | ${ms(s.latency.p999)} | ${failures(s)} | ${cores(s.targetCores)} | ${us(s.frontCpuUsPerRequest)} | ${int(r.ceiling.okRps)} | ${ms(r.ceiling.latency.p99)} | ${us(r.ceiling.frontCpuUsPerRequest)} | ${ratio(r.ratio)} | ${goalCell(r)} | ${other(r.service, r.ceiling)} |`)
  }
  lines.push('')
  lines.push(`${fsyncLine(res.fsync)}.`)
  lines.push('', ...durabilityMarkdown(res.throughput))
  if (res.bulk !== undefined && res.bulk.length > 0) lines.push('', ...bulkMarkdown(res.bulk))
  if (res.openLoop.length > 0) lines.push('', ...openLoopMarkdown(res.settings.latencyConnections, res.openLoop))
  for (const g of res.generatorChecks) {
    lines.push('', `Generator check (${g.tenants} tenant(s)): ${g.scenario} at ${int(g.ratePerS)} req/s against the ceiling: ${int(g.ceiling.okRps)} req/s, `
      + `p99 ${ms(g.ceiling.latency.p99)} ms, send lag p99 ${ms(g.sendLagP99Ms)} ms: ${g.keptSchedule ? 'the generator kept its schedule' : 'the generator fell BEHIND its schedule even against the ceiling'} `
      + `(generator ${cores(g.ceiling.generatorCores)} cores, other ${cores(g.ceiling.otherCores)}).`)
  }
  lines.push('')
  lines.push('Data load through the API (64 connections, no pipelining, tenants interleaved):')
  lines.push('')
  lines.push('| phase | requests | seconds | req/s | non-2xx / errors |')
  lines.push('|---|---:|---:|---:|---|')
  for (const p of res.load) lines.push(`| ${p.phase} | ${p.requests} | ${p.seconds.toFixed(1)} | ${int(p.rate)} | ${p.non2xx} / ${p.errors} |`)
  lines.push('')
  lines.push(`Service peak private memory (RssAnon, sampled every 200 ms): ${int(res.memory.servicePeakRssAnonMb)} MB `
    + `(RssFile, mostly the LMDB map: ${int(res.memory.servicePeakRssFileMb)} MB); ceiling: ${int(res.memory.ceilingPeakRssAnonMb)} MB. `
    + `Data directory at the end: ${int(res.dataDirMb)} MB.`)
  const probe = (p: ProbeResult): string => `${p.answered} of ${p.sent} answered${p.closedByServer ? ', then the server closed the connection' : ''}`
  lines.push(`Service built from ${res.serviceVersion}; consent references ${res.consentReferences === 'issued' ? 'issued by POST /{tenant}/consents' : 'fixed (the service has no consents API yet)'}.`)
  lines.push(`HTTP pipelining probe (${res.pipeliningProbe.service.sent} GETs in one write): service ${probe(res.pipeliningProbe.service)}; ceiling ${probe(res.pipeliningProbe.ceiling)}.`)
  const all = [...res.throughput.flatMap((r) => [r.service, r.ceiling]), ...res.openLoop.flatMap((o) => o.runs.map((r) => r.service))]
  const noisiest = Math.max(0, ...all.map((m) => m.otherCores))
  lines.push(`Other processes on the machine used up to ${noisiest.toFixed(2)} cores during a measured window (load average at start: ${res.loadAverageAtStart}); `
    + 'the "other CPU" column gives it per row (service / ceiling window); a row above ~0.2 was disturbed and should be re-run.')
  lines.push('')
  for (const n of res.notes) lines.push(`- ${n}`)
  return lines.join('\n')
}

/** The open-loop table: one row per fixed-rate run, with the goal's verdict where it applies. */
export function openLoopMarkdown(connections: number, rows: readonly OpenLoopScenario[]): string[] {
  const lines = [
    `Open loop (fixed rate, ${connections} connections, no pipelining; latency from each request's intended send time, coordinated omission corrected; `
      + `rates at 25/50/75% of the scenario's service req/s above). Goal: p99 < ${P99_AT_50_MS} ms at 50% (durable writes: or within 2 ms of the fsync p99 where that is higher), `
      + `< ${P99_AT_75_MS} ms at 75%, for get-node, put-node and the counters. "send lag p99": how late the generator itself sent; above 2 ms it fell behind its schedule and says so.`,
    '',
    '| scenario | tenants | share of max | rate req/s | achieved req/s | p50 ms | p90 ms | p99 ms | p99.9 ms | non-2xx / errors | send lag p99 ms | service CPU | goal | other CPU |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---:|',
  ]
  for (const o of rows) {
    for (const r of o.runs) {
      const s = r.service
      const goal = r.verdict === undefined ? '' : verdictText(r.verdict, { failures: s.non2xx + s.errors, keptSchedule: r.keptSchedule })
      const lag = `${ms(r.sendLagP99Ms)}${r.keptSchedule ? '' : ' (behind)'}`
      lines.push(`| ${o.name} | ${o.tenants} | ${pct(r.fraction)} of ${int(o.maxRps)} | ${int(r.ratePerS)} | ${int(s.okRps)} | ${ms(s.latency.p50)} | ${ms(s.latency.p90)} | ${ms(s.latency.p99)} | ${ms(s.latency.p999)} | ${failures(s)} | ${lag} | ${cores(s.targetCores)} | ${goal} | ${s.otherCores.toFixed(2)} |`)
    }
  }
  return lines
}

/** Writes bench/results/<ISO date>[-suffix].json (colons replaced, so the name is portable). */
export function writeJson(dir: string, isoDate: string, suffix: string | undefined, doc: object): string {
  mkdirSync(dir, { recursive: true })
  const stamp = isoDate.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')
  const file = join(dir, `${stamp}${suffix === undefined ? '' : `-${suffix}`}.json`)
  writeFileSync(file, JSON.stringify(doc, null, 2) + '\n')
  return file
}

export function writeResults(dir: string, res: RunResults): string {
  return writeJson(dir, res.date, undefined, res)
}
