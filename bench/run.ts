// `npm run bench -- [--quick]`: starts the real server (temp data dir, removed
// at the end) and the ceiling, each in its own process, after probing the
// disk's fsync latency; loads the data set through the API; then, for each
// --tenants entry, runs every scenario against both with the same generator,
// connections, pipelining and duration (closed loop: the maximum), and the
// service again at fixed rates of 25/50/75% of that maximum (open loop).
// Writes bench/results/<ISO date>.json and prints the markdown tables.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { startChild, type Child } from './child'
import { runCleanups, runMain } from './cleanup'
import { captureBodies } from './capture'
import { TENANTS, nodePath } from './fixture'
import { commitPipeline, scrapeCommitCounts, type CommitCounts } from './commit-stats'
import { fsyncLine, probeFsync } from './fsync-probe'
import { judge, verdictText } from './latency-goal'
import { runBulkLoad } from './bulk-load'
import { runLoad, type LoadResult, type PoolShape } from './load'
import { runOpenLoop } from './open-loop'
import { readCommandLine } from './command-line'
import type { Options } from './options'
import { preload } from './preload'
import { probePipelining } from './pipelining-probe'
import { CpuMeter, MachineCpuMeter, busiestOtherThreadCores, readDeviceWrittenBytes, readWrittenBytes, cpuMicrosPerRequest, threadCpuSeconds, MemorySampler, diskBytes, readLoadAverage, waitForQuiet } from './proc'
import { CEILING_ENTRY, ROOT, prepareService, startService, tempDir } from './service'
import { markdown, measured, writeJson, writeResults, type BulkScenarioResult, type GeneratorCheck, type Measured, type OpenLoopRun, type OpenLoopScenario, type RunResults, type ScenarioResult } from './report'
import { runScale, scaleMarkdown } from './scale'
import { OPEN_LOOP_FRACTIONS, rateFor } from './schedule'
import { bulkSourceFor, sourceFor, type BulkScenario, type Scenario, type ScenarioContext } from './scenarios'
import { fetchCredentials } from './tokens'
import { turnOffPretenuring } from '../src/start/v8-heap'
import { sleep } from './wait'

const RESULTS_DIR = join(ROOT, 'bench', 'results')
const SETTLE_MS = 500

const log = (line: string): void => console.log(line)

interface Target {
  label: 'service' | 'ceiling'
  child: Child
  memory: MemorySampler
  /** The service's data directory: the block device whose writes a window counts. */
  dataDir?: string
}

/** Bytes written so far: by the target's own write calls, and to its data directory's device. */
const bytesWritten = (target: Target): { written?: number; device?: number } => ({
  written: readWrittenBytes(target.child.pid), device: target.dataDir === undefined ? undefined : readDeviceWrittenBytes(target.dataDir),
})

/** CPU of other processes above which a measured window counts as disturbed. */
const NOISE_CORES = 0.25

/** Runs one load against a target; calls onWindow when its measured window opens and closes. */
type Runner<R extends LoadResult> = (onWindow: (phase: 'start' | 'end') => void) => Promise<R>

interface Run<R extends LoadResult> {
  m: Measured
  r: R
}

/**
 * One measured run, on a quiet machine if it can be had: waits (bounded) for
 * other processes to calm down, and re-runs once when they disturbed the
 * window (keeping the less disturbed run). The noise is reported either way.
 */
async function measure<R extends LoadResult>(target: Target, run: Runner<R>, o: Options): Promise<Run<R>> {
  if (o.quietWaitMs > 0) await waitForQuiet(NOISE_CORES, o.quietWaitMs)
  const first = await measureOnce(target, run)
  if (first.m.otherCores <= NOISE_CORES || o.quietWaitMs === 0) return first
  if (!(await waitForQuiet(NOISE_CORES, o.quietWaitMs))) return first
  log(`    (${target.label}: other processes used ${first.m.otherCores.toFixed(2)} cores; re-running)`)
  const second = await measureOnce(target, run)
  return second.m.otherCores < first.m.otherCores ? second : first
}

async function measureOnce<R extends LoadResult>(target: Target, run: Runner<R>): Promise<Run<R>> {
  const cpu = new CpuMeter(target.child.pid)
  // Node's main thread has the process's id as its thread id: the front thread.
  const front = new CpuMeter(target.child.pid, target.child.pid)
  const machineCpu = new MachineCpuMeter()
  let targetCores = 0
  let machineCores = 0
  // The service's commit pipeline in the window (bench/commit-stats.ts); the ceiling has none.
  const pipelined = target.label === 'service'
  let commits0: Promise<CommitCounts | undefined> = Promise.resolve(undefined)
  let commits1: Promise<CommitCounts | undefined> = Promise.resolve(undefined)
  let threads0 = new Map<number, number>()
  let busiestCores = 0
  let written0: ReturnType<typeof bytesWritten> = {}
  let written1: ReturnType<typeof bytesWritten> = {}
  let t0 = 0
  target.memory.newWindow()
  const result = await run((phase) => {
    if (phase === 'start') {
      cpu.start()
      front.start()
      machineCpu.start()
      t0 = performance.now()
      if (pipelined) {
        threads0 = threadCpuSeconds(target.child.pid)
        written0 = bytesWritten(target)
        commits0 = scrapeCommitCounts(target.child.url)
      }
    } else {
      targetCores = cpu.stop()
      front.stop()
      machineCores = machineCpu.stop()
      if (pipelined) {
        busiestCores = busiestOtherThreadCores(target.child.pid, threads0, threadCpuSeconds(target.child.pid), (performance.now() - t0) / 1000)
        written1 = bytesWritten(target)
        commits1 = scrapeCommitCounts(target.child.url)
      }
    }
  })
  const [c0, c1] = await Promise.all([commits0, commits1])
  const peak = target.memory.newWindow()
  await sleep(SETTLE_MS)
  const otherCores = Math.max(0, machineCores - targetCores - result.generatorCores)
  const m = measured(result, { targetCores, otherCores, frontCpuUsPerRequest: cpuMicrosPerRequest(front.seconds, result.completed) }, peak)
  const perRequest = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined || b === undefined || result.completed === 0 ? undefined : (b - a) / result.completed)
  if (pipelined) {
    m.pipeline = commitPipeline(c0, c1, m.okRps, busiestCores, {
      writtenBytesPerRequest: perRequest(written0.written, written1.written), deviceBytesPerRequest: perRequest(written0.device, written1.device),
    })
  }
  return { m, r: result }
}

const closedLoop = (target: Target, scenario: Scenario, ctx: ScenarioContext, shape: PoolShape, o: Options): Runner<LoadResult> => (onWindow) =>
  runLoad({ origin: target.child.url, ...shape, warmupMs: o.warmupMs, durationMs: o.durationMs, next: sourceFor(scenario, ctx), onWindow })

function line(label: string, m: Measured): string {
  const fail = m.non2xx + m.errors > 0 ? `  non-2xx ${m.non2xx} errors ${m.errors} ${JSON.stringify({ ...m.statuses, ...m.errorMessages })}` : ''
  const unfinished = m.unfinished > 0 ? `  unfinished ${m.unfinished}` : ''
  const p = m.pipeline
  const pipe = p === undefined ? '' : `\n             actor pipeline: busiest actor thread ${p.busiestThreadCores.toFixed(2)} cores`
    + (p.writesPerCommit === undefined ? '' : `, ${p.writesPerCommit.toFixed(1)} writes per group commit, ~${Math.round(p.commitsPerSecond!)} group commits/s`)
    + (p.journalSyncsPerSecond === undefined ? '' : `, ~${Math.round(p.journalSyncsPerSecond)} journal fdatasyncs/s, ~${p.lmdbSyncsPerSecond!.toFixed(1)} LMDB syncs/s`)
    + (p.writtenBytesPerRequest === undefined ? '' : `, ${Math.round(p.writtenBytesPerRequest)} bytes written per request`)
    + (p.deviceBytesPerRequest === undefined ? '' : ` (${Math.round(p.deviceBytesPerRequest)} to the device)`)
  return `    ${label.padEnd(8)} ${Math.round(m.okRps).toString().padStart(7)} req/s  p50 ${m.latency.p50} ms  p99 ${m.latency.p99} ms  p99.9 ${m.latency.p999} ms`
    + `  cpu ${m.targetCores.toFixed(2)} (front ${m.frontCpuUsPerRequest.toFixed(1)} us/req, generator ${m.generatorCores.toFixed(2)}, other ${m.otherCores.toFixed(2)})  RssAnon ${Math.round(m.peakRssAnonMb)} MB${fail}${unfinished}${pipe}`
}

async function throughputPass(service: Target, ceiling: Target, ctx: ScenarioContext, o: Options, scenarios: Scenario[]): Promise<ScenarioResult[]> {
  const out: ScenarioResult[] = []
  for (const s of scenarios) {
    const shape = s.shape ?? { connections: o.connections, pipelining: o.pipelining }
    log(`  ${s.name} (${shape.connections} x ${shape.pipelining}, ${ctx.tenants} tenant(s))`)
    // The ceiling first: the service's previous run may still be finishing background work.
    const c = (await measure(ceiling, closedLoop(ceiling, s, ctx, shape, o), o)).m
    log(line('ceiling', c))
    const v = (await measure(service, closedLoop(service, s, ctx, shape, o), o)).m
    log(line('service', v))
    for (const sample of v.non2xxSamples) log(`      e.g. ${sample}`)
    out.push({ name: s.name, tenants: ctx.tenants, stands: s.stands, ...shape, service: v, ceiling: c, ratio: c.okRps > 0 ? v.okRps / c.okRps : Number.NaN, goal: s.goal })
  }
  return out
}

/**
 * Can the generator keep the highest rate of the open-loop pass? The same
 * generator against the ceiling (whose answers cost next to nothing) at the
 * pass's highest rate, with the requests of the scenario that has it.
 */
async function generatorCheck(ceiling: Target, ctx: ScenarioContext, o: Options, scenarios: Scenario[], maxima: readonly ScenarioResult[]): Promise<GeneratorCheck | undefined> {
  const top = OPEN_LOOP_FRACTIONS[OPEN_LOOP_FRACTIONS.length - 1]!
  const best = maxima.reduce<ScenarioResult | undefined>((a, m) => (a === undefined || m.service.okRps > a.service.okRps ? m : a), undefined)
  const scenario = scenarios.find((s) => s.name === best?.name)
  if (best === undefined || scenario === undefined || !(best.service.okRps >= 1)) return undefined
  const ratePerS = rateFor(best.service.okRps, top)
  const connections = scenario.shape?.connections ?? o.latencyConnections
  const { m, r } = await measure(ceiling, (onWindow) => runOpenLoop({
    origin: ceiling.child.url, connections, ratePerS, warmupMs: o.warmupMs, durationMs: o.durationMs, next: sourceFor(scenario, ctx), onWindow,
  }), o)
  log(`  generator check: ${scenario.name} at ${ratePerS}/s against the ceiling: ${Math.round(m.okRps)} req/s, p99 ${m.latency.p99} ms, `
    + `send lag p99 ${r.sendLagP99Ms} ms (${r.keptSchedule ? 'kept its schedule' : 'BEHIND its schedule'}), generator ${m.generatorCores.toFixed(2)} cores`)
  return { scenario: scenario.name, tenants: ctx.tenants, ratePerS, ceiling: m, sendLagP99Ms: r.sendLagP99Ms, keptSchedule: r.keptSchedule }
}

/** Fixed rates at 25/50/75% of each scenario's closed-loop maximum (the service's 2xx req/s in `maxima`). */
async function openLoopPass(service: Target, ctx: ScenarioContext, o: Options, scenarios: Scenario[], maxima: readonly ScenarioResult[], fsyncP99Ms: number): Promise<OpenLoopScenario[]> {
  const out: OpenLoopScenario[] = []
  for (const s of scenarios) {
    const maxRps = maxima.find((m) => m.name === s.name)?.service.okRps ?? 0
    const connections = s.shape?.connections ?? o.latencyConnections
    if (!(maxRps >= 1)) {
      log(`  ${s.name}: no maximum measured, open loop skipped`)
      continue
    }
    log(`  ${s.name} (${connections} connections, ${ctx.tenants} tenant(s), maximum ${Math.round(maxRps)} req/s)`)
    const runs: OpenLoopRun[] = []
    for (const fraction of OPEN_LOOP_FRACTIONS) {
      const ratePerS = rateFor(maxRps, fraction)
      const { m, r } = await measure(service, (onWindow) => runOpenLoop({
        origin: service.child.url, connections, ratePerS, warmupMs: o.warmupMs, durationMs: o.durationMs, next: sourceFor(s, ctx), onWindow,
      }), o)
      const verdict = s.latencyGoal === undefined ? undefined
        : judge({ fraction, p99Ms: m.latency.p99, failures: m.non2xx + m.errors, keptSchedule: r.keptSchedule }, s.latencyGoal, fsyncP99Ms)
      const goal = verdict === undefined ? '' : `  goal ${verdictText(verdict, { failures: m.non2xx + m.errors, keptSchedule: r.keptSchedule })}`
      log(`    ${Math.round(fraction * 100)}% = ${ratePerS}/s: ${Math.round(m.okRps)} req/s  p50 ${m.latency.p50}  p90 ${m.latency.p90}  p99 ${m.latency.p99}  p99.9 ${m.latency.p999} ms`
        + `  send lag p99 ${r.sendLagP99Ms} ms${r.keptSchedule ? '' : ' (GENERATOR BEHIND)'}  non-2xx ${m.non2xx} errors ${m.errors}${m.unfinished > 0 ? ` unfinished ${m.unfinished}` : ''}${goal}`)
      runs.push({ fraction, ratePerS, service: m, scheduled: r.scheduled, sent: r.sent, sendLagP99Ms: r.sendLagP99Ms, sendLagMaxMs: r.sendLagMaxMs, keptSchedule: r.keptSchedule, verdict })
    }
    out.push({ name: s.name, tenants: ctx.tenants, connections, maxRps, latencyGoal: s.latencyGoal, runs })
  }
  return out
}

/**
 * The bulk scenarios, the service only (the ceiling has no bulk route): one
 * streamed bulk request per tenant of the pass. Beside each, the actor CPU
 * per line (the busiest actor thread's CPU over the lines answered) and the
 * ratio to the pass's put-node at the default connections, the issue's yardstick.
 */
async function bulkPass(service: Target, ctx: ScenarioContext, o: Options, scenarios: readonly BulkScenario[], rows: readonly ScenarioResult[]): Promise<BulkScenarioResult[]> {
  const out: BulkScenarioResult[] = []
  const single = rows.find((r) => r.name === 'put-node')
  for (const s of scenarios) {
    log(`  ${s.name} (${ctx.tenants} bulk request(s), one per tenant)`)
    const streams = Array.from({ length: ctx.tenants }, (_, t) => ({
      tenant: TENANTS[t]!.id, authorization: ctx.headers[t]!.write['authorization']!, next: bulkSourceFor(s, ctx, t),
    }))
    const { m } = await measure(service, (onWindow) => runBulkLoad({ origin: service.child.url, warmupMs: o.warmupMs, durationMs: o.durationMs, streams, onWindow }), o)
    log(line('service', m).replace('req/s', 'lines/s'))
    for (const sample of m.non2xxSamples) log(`      e.g. ${sample}`)
    const actorUsPerLine = m.pipeline === undefined || m.okRps === 0 ? undefined : (m.pipeline.busiestThreadCores * 1e6) / m.okRps
    const vsSingle = single === undefined ? undefined : { scenario: single.name, connections: single.connections, ratio: m.okRps / single.service.okRps }
    if (vsSingle !== undefined) log(`    ${vsSingle.ratio.toFixed(2)}x ${vsSingle.scenario} at ${vsSingle.connections} connections in this pass; actor ${actorUsPerLine?.toFixed(1) ?? '-'} µs per line`)
    out.push({ name: s.name, tenants: ctx.tenants, stands: s.stands, connections: ctx.tenants, service: m, actorUsPerLine, vsSingle })
  }
  return out
}

function notes(scenarios: readonly Scenario[], tokenClients: 'generated' | 'bootstrap'): string[] {
  const out = [
    'ratio = service 2xx req/s / ceiling 2xx req/s for the same scenario; the ceiling answers fixed bodies copied from the service\'s own answers in this run.',
    'No HTTP pipelining by default: uWebSockets.js closes a connection when a pipelined request arrives while an earlier answer on it is still pending (uWebSockets.js does not support pipelining with asynchronous answers; upstream closed the request as wontfix), and every answer of the service is asynchronous (it comes from a shard actor). The ceiling answers synchronously and would pipeline; both run at the same depth (1) with more connections instead. See the probe line above.',
    'The load generator runs on the same machine and takes CPU from the service and the ceiling alike (its share is in the JSON: generatorCores).',
  ]
  if (scenarios.some((s) => s.name === 'token')) {
    out.push(tokenClients === 'generated'
      ? 'token: the clients were created through the admin API with server-generated secrets (256 bits, checked as SHA-256); each token is stored (hashed) and flushed before it is answered.'
      : 'token: the admin API did not answer, so the bench clients of the bootstrap file were used; their secrets are human-chosen and checked with scrypt, about one core per ~10 tokens/s.')
  }
  return out
}

/** `git rev-parse` of the checkout, marked when the service's sources differ from it. */
function serviceVersion(): string {
  try {
    const git = (...args: string[]): string => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const commit = git('rev-parse', '--short', 'HEAD')
    const dirty = git('status', '--porcelain', '--', 'src', 'workers') !== ''
    return `commit ${commit}${dirty ? ' with uncommitted changes in src/ or workers/' : ''}`
  } catch {
    return 'an unknown commit (not a git checkout)'
  }
}

function machine(): RunResults['machine'] {
  const list = cpus()
  return {
    cpus: list.length, cpuModel: list[0]?.model.trim() ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version, platform: `${process.platform} ${process.arch}`,
  }
}

async function main(): Promise<number> {
  // The same V8 setting as the service's threads (src/start/v8-heap.ts).
  turnOffPretenuring()
  const command = readCommandLine(process.argv.slice(2))
  if (command === undefined) return 2
  const { o, scenarios, bulk: bulkScenarios } = command
  if (o.scale !== undefined) {
    try {
      const res = await runScale(o, o.scale, log)
      const file = writeJson(RESULTS_DIR, res.date, 'scale', res)
      log('')
      log(scaleMarkdown(res))
      log('')
      log(`results: ${file}`)
      return 0
    } finally {
      await runCleanups()
    }
  }
  const started = new Date()
  const loadAverageAtStart = readLoadAverage()
  const tmp = tempDir('graph-bench-')
  const children: Child[] = []
  const samplers: MemorySampler[] = []
  try {
    const layout = prepareService(tmp)
    // Before anything else runs: the disk's own fsync tail, in the data directory's filesystem.
    const fsync = probeFsync(tmp, o.mode === 'quick' ? { maxSyncs: 1000, maxMs: 2000 } : { maxSyncs: 3000, maxMs: 5000 })
    log(`  ${fsyncLine(fsync)}`)
    log(`bench (${o.mode}): starting the service (--workers ${o.workers}) in ${tmp}`)
    const serverChild = await startService(layout, o.workers, o.cpuProfDir)
    children.push(serverChild)
    const service: Target = { label: 'service', child: serverChild, memory: new MemorySampler(serverChild.pid), dataDir: layout.dataDir }
    samplers.push(service.memory)
    log(`  service at ${serverChild.url} (pid ${serverChild.pid})`)

    const credentials = await fetchCredentials(serverChild.url)
    const headers = credentials.headers
    log(`  ${TENANTS.length} tokens fetched (one per tenant); consent references: ${credentials.consents}; token clients: ${credentials.tokenClients}`)
    const d = o.data
    log(`loading: ${TENANTS.length} tenants x (${d.productsPerTenant} products, ${d.customersPerTenant} customers, ${d.hub10PerTenant} hubs of degree 10, ${d.hub1000PerTenant} of degree 1000)`)
    const load = await preload(serverChild.url, d, headers, log)
    const bodies = await captureBodies(serverChild.url, headers, log)
    const bodiesFile = join(tmp, 'ceiling-bodies.json')
    writeFileSync(bodiesFile, JSON.stringify(bodies))
    const ceilingChild = await startChild('ceiling', CEILING_ENTRY, ['--bodies', bodiesFile])
    children.push(ceilingChild)
    const ceiling: Target = { label: 'ceiling', child: ceilingChild, memory: new MemorySampler(ceilingChild.pid) }
    samplers.push(ceiling.memory)
    log(`  ceiling at ${ceilingChild.url} (pid ${ceilingChild.pid})`)
    const probePath = nodePath(TENANTS[0]!.id, 'customer', 'c1')
    const pipeliningProbe = {
      service: await probePipelining(serverChild.url, probePath, headers[0]!.read),
      ceiling: await probePipelining(ceilingChild.url, probePath, headers[0]!.read),
    }
    log(`  pipelining probe: service answered ${pipeliningProbe.service.answered} of ${pipeliningProbe.service.sent}, ceiling ${pipeliningProbe.ceiling.answered} of ${pipeliningProbe.ceiling.sent}`)
    if (o.pipelining > 1 && pipeliningProbe.service.answered < pipeliningProbe.service.sent) {
      log(`  WARNING: --pipelining ${o.pipelining}: the service does not answer pipelined requests; expect errors (they are counted, not hidden)`)
    }

    const throughput: ScenarioResult[] = []
    const bulk: BulkScenarioResult[] = []
    const openLoop: OpenLoopScenario[] = []
    const generatorChecks: GeneratorCheck[] = []
    for (const tenants of o.tenants) {
      const ctx: ScenarioContext = { headers, data: d, tenants }
      // With one tenant, put-node is already the hot-tenant run.
      const these = scenarios.filter((s) => tenants > 1 || !s.name.endsWith('-1-tenant'))
      log(`throughput pass, ${tenants} tenant(s): ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s per run`)
      const rows = await throughputPass(service, ceiling, ctx, o, these)
      throughput.push(...rows)
      if (bulkScenarios.length > 0) {
        log(`bulk pass, ${tenants} tenant(s): ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s per run`)
        bulk.push(...await bulkPass(service, ctx, o, bulkScenarios, rows))
      }
      if (o.skipLatency) continue
      const check = await generatorCheck(ceiling, ctx, o, these, rows)
      if (check !== undefined) generatorChecks.push(check)
      log(`open-loop pass, ${tenants} tenant(s): fixed rates at ${OPEN_LOOP_FRACTIONS.map((f) => `${f * 100}%`).join(', ')} of each maximum; disk fsync p99 ${fsync.p99} ms`)
      openLoop.push(...await openLoopPass(service, ctx, o, these, rows, fsync.p99))
    }

    service.memory.sample()
    const results: RunResults = {
      date: started.toISOString(),
      mode: o.mode === 'quick' ? '--quick' : 'full',
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      machine: machine(),
      settings: {
        warmupS: o.warmupMs / 1000, durationS: o.durationMs / 1000, connections: o.connections, pipelining: o.pipelining,
        latencyConnections: o.latencyConnections, workers: o.workers, tenants: o.tenants,
      },
      data: {
        tenants: TENANTS.length, customers: d.customersPerTenant * TENANTS.length, products: d.productsPerTenant * TENANTS.length,
        hub10: d.hub10PerTenant * TENANTS.length, hub1000: d.hub1000PerTenant * TENANTS.length, putIdSpace: d.putIdSpace,
      },
      load,
      throughput,
      bulk,
      openLoop,
      generatorChecks,
      fsync,
      memory: { servicePeakRssAnonMb: service.memory.peakAnonMb, servicePeakRssFileMb: service.memory.peakFileMb, ceilingPeakRssAnonMb: ceiling.memory.peakAnonMb },
      dataDirMb: diskBytes(layout.dataDir) / 2 ** 20,
      ceilingBodiesCaptured: bodies.captured,
      pipeliningProbe,
      consentReferences: credentials.consents,
      serviceVersion: serviceVersion(),
      loadAverageAtStart,
      notes: notes(scenarios, credentials.tokenClients),
    }
    const file = writeResults(RESULTS_DIR, results)
    log('')
    log(markdown(results))
    log('')
    log(`results: ${file}`)
    return 0
  } finally {
    for (const s of samplers) s.stop()
    await Promise.all(children.map((c) => c.stop()))
    await runCleanups()
  }
}

runMain(main)
