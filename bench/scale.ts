// `npm run bench -- --scale`: loads 1,000,000 nodes and 5,000,000 relations
// through the API in ten slices and reports, per slice, the ingest rates (do
// they stay flat?), memory and disk; bytes on disk per node and relation;
// get-node and neighbours (~10 neighbours per node) before and after; and the
// time to reopen the data directory. `--scale --quick` does a tenth of it.
import type { Child } from './child'
import { TENANTS, customerBody, customerName, knowsPath, neighboursPath, nodePath, type TenantHeaders } from './fixture'
import type { LatencySummary } from './histogram'
import { runAll, runLoad, type BatchResult, type BenchRequest } from './load'
import type { Options, ScaleShape } from './options'
import { CpuMeter, MachineCpuMeter, MemorySampler, diskBytes, readMemory } from './proc'
import { pick, seeded, type Random } from './random'
import { prepareService, startService, tempDir, type ServiceLayout } from './service'
import { fetchCredentials } from './tokens'
import { sleep } from './wait'

const T = TENANTS.length
const LOAD_SHAPE = { connections: 64, pipelining: 1 }
const READ_SHAPE = { connections: 64, pipelining: 1 }
const MB = 2 ** 20
/** Cores used by other processes above which a slice counts as disturbed. */
const NOISE_CORES = 0.25

export interface SliceReport {
  slice: number
  nodesTotal: number
  relationsTotal: number
  nodesPerS: number
  relationsPerS: number
  seconds: number
  non2xx: number
  errors: number
  rssAnonMb: number
  peakRssAnonMb: number
  rssFileMb: number
  diskMb: number
  /** CPU of the service during the slice, and of other processes (noise; above ~0.2 the slice was disturbed), in cores. */
  serviceCores: number
  otherCores: number
}

export interface ReadFigures {
  rps: number
  latency: LatencySummary
  non2xx: number
  errors: number
  /** CPU of other processes during the window (noise), in cores. */
  otherCores: number
  /** The service's peak private memory (RssAnon) during the pass, warm-up included; absent in results of earlier builds. */
  peakRssAnonMb?: number
}

export interface ScaleResults {
  date: string
  mode: string
  shape: ScaleShape
  workers: number
  slices: SliceReport[]
  /** Last slice's rate relative to the first (1.0 = flat). */
  nodeRateRatio: number
  relationRateRatio: number
  bytesPerNode: number
  bytesPerRelation: number
  diskMb: number
  peakRssAnonMb: number
  peakRssFileMb: number
  before: { getNode: ReadFigures; neighbours: ReadFigures }
  after: { getNode: ReadFigures; neighbours: ReadFigures }
  /** The first start on an empty data directory, for comparison with the reopen. */
  firstStartMs: number
  reopen: { stopMs: number; listeningMs: number; firstAnswerMs: number }
}

const nodeId = (g: number): string => `n${g}`
const tenantOf = (g: number): number => g % T

function* sliceNodes(from: number, to: number, h: readonly TenantHeaders[]): Generator<BenchRequest> {
  for (let g = from; g < to; g++) {
    const t = tenantOf(g)
    yield { method: 'PUT', path: nodePath(TENANTS[t]!.id, 'customer', nodeId(g)), headers: h[t]!.write, body: customerBody(g, customerName(g)) }
  }
}

/** Each node of the slice knows `per` random nodes of the same slice and tenant: ~2 x per neighbours each. */
function* sliceRelations(from: number, size: number, per: number, h: readonly TenantHeaders[], random: Random): Generator<BenchRequest> {
  const sameTenant = size / T
  for (let i = 0; i < size; i++) {
    const g = from + i
    const t = tenantOf(g)
    for (let k = 0; k < per; k++) {
      const target = from + ((i + T * (1 + pick(random, sameTenant - 1))) % size)
      yield {
        method: 'PUT', path: knowsPath(TENANTS[t]!.id, nodeId(g), nodeId(target), `k${k}`), headers: h[t]!.write,
        body: `{"since":${1_600_000_000_000 + g}}`,
      }
    }
  }
}

async function reads(child: Child, memory: MemorySampler, loaded: number, h: readonly TenantHeaders[], durationMs: number, log: (l: string) => void): Promise<{ getNode: ReadFigures; neighbours: ReadFigures }> {
  const figures = async (name: string, path: (t: string, id: string) => string): Promise<ReadFigures> => {
    memory.newWindow()
    const random = seeded(loaded + name.length)
    const serviceCpu = new CpuMeter(child.pid)
    const machineCpu = new MachineCpuMeter()
    let otherCores = 0
    const r = await runLoad({
      origin: child.url, ...READ_SHAPE, warmupMs: 1000, durationMs,
      onWindow: (phase) => {
        if (phase === 'start') {
          serviceCpu.start()
          machineCpu.start()
        } else {
          const service = serviceCpu.stop()
          otherCores = machineCpu.stop() - service
        }
      },
      next: () => {
        const g = pick(random, loaded)
        const t = tenantOf(g)
        return { method: 'GET', path: path(TENANTS[t]!.id, nodeId(g)), headers: h[t]!.read }
      },
    })
    otherCores = Math.max(0, otherCores - r.generatorCores)
    const peakRssAnonMb = memory.newWindow()
    log(`    ${name} at ${loaded} nodes: ${Math.round(r.okRps)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}, other CPU ${otherCores.toFixed(2)}; RssAnon peak ${Math.round(peakRssAnonMb)} MB`)
    return { rps: r.okRps, latency: r.latency, non2xx: r.non2xx, errors: r.errors, otherCores, peakRssAnonMb }
  }
  return {
    getNode: await figures('get-node', (t, id) => nodePath(t, 'customer', id)),
    neighbours: await figures('neighbours (~10)', neighboursPath),
  }
}

function check(what: string, r: BatchResult): void {
  if (r.non2xx === 0 && r.errors === 0) return
  throw new Error(`${what}: ${r.non2xx} non-2xx, ${r.errors} errors: ${JSON.stringify({ statuses: r.statuses, samples: r.non2xxSamples, errors: r.errorMessages })}`)
}

async function reopen(layout: ServiceLayout, old: Child, workers: number, h: readonly TenantHeaders[]): Promise<{ child: Child; stopMs: number; listeningMs: number; firstAnswerMs: number }> {
  const t0 = performance.now()
  await old.stop()
  const stopMs = performance.now() - t0
  const t1 = performance.now()
  const child = await startService(layout, workers)
  const listeningMs = performance.now() - t1
  const probe: BenchRequest = { method: 'GET', path: nodePath(TENANTS[0]!.id, 'customer', nodeId(0)), headers: h[0]!.read }
  for (;;) {
    const r = await runAll(child.url, { connections: 1, pipelining: 1 }, [probe])
    if (r.statuses['200'] === 1) break
    if (performance.now() - t1 > 120_000) throw new Error(`the reopened service does not answer: ${JSON.stringify(r)}`)
    await sleep(20)
  }
  return { child, stopMs, listeningMs, firstAnswerMs: performance.now() - t1 }
}

export async function runScale(o: Options, shape: ScaleShape, log: (l: string) => void): Promise<ScaleResults> {
  const tmp = tempDir('graph-bench-scale-')
  const layout = prepareService(tmp)
  let child: Child | undefined
  let memory: MemorySampler | undefined
  const started = new Date()
  try {
    log(`bench --scale: ${shape.nodes} nodes, ${shape.nodes * shape.relationsPerNode} relations in ${shape.slices} slices; service in ${tmp}`)
    const tStart = performance.now()
    child = await startService(layout, o.workers)
    const firstStartMs = performance.now() - tStart
    memory = new MemorySampler(child.pid, 500)
    const h = (await fetchCredentials(child.url)).headers
    const size = shape.nodes / shape.slices
    if (!Number.isInteger(size) || size % T !== 0) throw new Error(`slice size ${size} must be a multiple of ${T}`)
    const random = seeded(42)
    const slices: SliceReport[] = []
    let nodeDisk = 0
    let relationDisk = 0
    let before: ScaleResults['before'] | undefined
    for (let s = 0; s < shape.slices; s++) {
      memory.newWindow()
      const serviceCpu = new CpuMeter(child.pid)
      const machineCpu = new MachineCpuMeter()
      serviceCpu.start()
      machineCpu.start()
      const ownCpu = process.cpuUsage()
      const t0 = performance.now()
      const from = s * size
      const d0 = diskBytes(layout.dataDir)
      const nodes = await runAll(child.url, LOAD_SHAPE, sliceNodes(from, from + size, h))
      check(`slice ${s + 1} nodes`, nodes)
      const d1 = diskBytes(layout.dataDir)
      const rels = await runAll(child.url, LOAD_SHAPE, sliceRelations(from, size, shape.relationsPerNode, h, random))
      check(`slice ${s + 1} relations`, rels)
      const d2 = diskBytes(layout.dataDir)
      nodeDisk += d1 - d0
      relationDisk += d2 - d1
      const serviceCores = serviceCpu.stop()
      const own = process.cpuUsage(ownCpu)
      const ownCores = (own.user + own.system) / 1000 / (performance.now() - t0)
      const otherCores = Math.max(0, machineCpu.stop() - serviceCores - ownCores)
      const mem = readMemory(child.pid)
      const report: SliceReport = {
        slice: s + 1, nodesTotal: from + size, relationsTotal: (from + size) * shape.relationsPerNode,
        nodesPerS: nodes.rate, relationsPerS: rels.rate, seconds: nodes.seconds + rels.seconds,
        non2xx: nodes.non2xx + rels.non2xx, errors: nodes.errors + rels.errors,
        rssAnonMb: mem?.rssAnonMb ?? 0, peakRssAnonMb: memory.newWindow(), rssFileMb: mem?.rssFileMb ?? 0, diskMb: d2 / MB,
        serviceCores, otherCores,
      }
      slices.push(report)
      log(`  slice ${report.slice}: ${Math.round(report.nodesPerS)} nodes/s, ${Math.round(report.relationsPerS)} relations/s, `
        + `${report.seconds.toFixed(0)} s; service CPU ${serviceCores.toFixed(2)}, other ${otherCores.toFixed(2)}; RssAnon ${Math.round(report.rssAnonMb)} MB (peak ${Math.round(report.peakRssAnonMb)}), RssFile ${Math.round(report.rssFileMb)} MB, disk ${Math.round(report.diskMb)} MB`)
      if (s === 0) before = await reads(child, memory, from + size, h, o.durationMs, log)
    }
    const after = await reads(child, memory, shape.nodes, h, o.durationMs, log)
    const peakRssAnonMb = memory.peakAnonMb
    const peakRssFileMb = memory.peakFileMb
    memory.stop()
    const re = await reopen(layout, child, o.workers, h)
    child = re.child
    log(`  reopen: stop ${Math.round(re.stopMs)} ms, start to listening ${Math.round(re.listeningMs)} ms, to the first get-node answer ${Math.round(re.firstAnswerMs)} ms`)
    const first = slices[0]!
    const last = slices[slices.length - 1]!
    return {
      date: started.toISOString(),
      mode: o.mode === 'quick' ? '--scale --quick' : '--scale',
      shape,
      workers: o.workers,
      slices,
      nodeRateRatio: last.nodesPerS / first.nodesPerS,
      relationRateRatio: last.relationsPerS / first.relationsPerS,
      bytesPerNode: nodeDisk / shape.nodes,
      bytesPerRelation: relationDisk / (shape.nodes * shape.relationsPerNode),
      diskMb: diskBytes(layout.dataDir) / MB,
      peakRssAnonMb,
      peakRssFileMb,
      before: before!,
      after,
      firstStartMs,
      reopen: { stopMs: re.stopMs, listeningMs: re.listeningMs, firstAnswerMs: re.firstAnswerMs },
    }
  } finally {
    memory?.stop()
    await child?.stop()
  }
}

const pct = (r: number): string => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(0)}%`

export function scaleMarkdown(r: ScaleResults): string {
  const lines: string[] = []
  lines.push(`### ${r.mode} run, ${r.date}`)
  lines.push('')
  lines.push(`${r.shape.nodes} nodes (~250-byte bodies) and ${r.shape.nodes * r.shape.relationsPerNode} relations through the API, 16 tenants, `
    + `${r.shape.slices} slices, ${LOAD_SHAPE.connections} connections, --workers ${r.workers}. Each node knows ${r.shape.relationsPerNode} random nodes of its slice and tenant (~${2 * r.shape.relationsPerNode} neighbours).`)
  lines.push('')
  lines.push('| slice | nodes | relations | nodes/s | relations/s | seconds | non-2xx / errors | RssAnon MB (peak) | RssFile MB | disk MB | service CPU | other CPU |')
  lines.push('|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|')
  for (const s of r.slices) {
    lines.push(`| ${s.slice} | ${s.nodesTotal} | ${s.relationsTotal} | ${Math.round(s.nodesPerS)} | ${Math.round(s.relationsPerS)} | ${s.seconds.toFixed(0)} | ${s.non2xx} / ${s.errors} | `
      + `${Math.round(s.rssAnonMb)} (${Math.round(s.peakRssAnonMb)}) | ${Math.round(s.rssFileMb)} | ${Math.round(s.diskMb)} | ${s.serviceCores.toFixed(2)} | ${s.otherCores.toFixed(2)} |`)
  }
  lines.push('')
  const first = r.slices[0]!
  const last = r.slices[r.slices.length - 1]!
  const disturbed = [first, last].filter((x) => x.otherCores > NOISE_CORES).map((x) => x.slice)
  const flat = Math.abs(r.nodeRateRatio - 1) <= 0.15 && Math.abs(r.relationRateRatio - 1) <= 0.15
  const verdict = disturbed.length > 0
    ? `not judged: other processes disturbed slice ${disturbed.join(' and ')}`
    : flat ? 'met' : 'missed'
  lines.push(`Ingest, last slice vs first: nodes ${pct(r.nodeRateRatio)}, relations ${pct(r.relationRateRatio)} (goal: within 15%: ${verdict}).`)
  lines.push(`Disk: ${Math.round(r.bytesPerNode)} B per node, ${Math.round(r.bytesPerRelation)} B per relation (growth of the data directory during the node and relation phases), ${Math.round(r.diskMb)} MB in all.`)
  lines.push(`Peak private memory (RssAnon): ${Math.round(r.peakRssAnonMb)} MB (goal < 600 MB: ${r.peakRssAnonMb < 600 ? 'met' : 'missed'}); peak RssFile (LMDB map pages): ${Math.round(r.peakRssFileMb)} MB.`)
  lines.push('')
  lines.push(`| read (${READ_SHAPE.connections} connections) | at ${r.slices[0]!.nodesTotal} nodes: req/s | p50 ms | p99 ms | other CPU | RssAnon peak MB | at ${r.shape.nodes} nodes: req/s | p50 ms | p99 ms | other CPU | RssAnon peak MB |`)
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  // Results written before the noise was measured have no otherCores.
  const noise = (f: ReadFigures): string => (typeof f.otherCores === 'number' ? f.otherCores.toFixed(2) : '-')
  const peak = (f: ReadFigures): string => (f.peakRssAnonMb === undefined ? '-' : String(Math.round(f.peakRssAnonMb)))
  const row = (name: string, b: ReadFigures, a: ReadFigures): string =>
    `| ${name} | ${Math.round(b.rps)} | ${b.latency.p50} | ${b.latency.p99} | ${noise(b)} | ${peak(b)} | ${Math.round(a.rps)} | ${a.latency.p50} | ${a.latency.p99} | ${noise(a)} | ${peak(a)} |`
  lines.push(row('get-node', r.before.getNode, r.after.getNode))
  lines.push(row('neighbours (~10)', r.before.neighbours, r.after.neighbours))
  lines.push('')
  lines.push('"other CPU": cores used by other processes during the slice; above ~0.2 the slice was disturbed and its rates are not comparable.')
  lines.push(`Reopen: SIGTERM to exit ${Math.round(r.reopen.stopMs)} ms; start to \`listening\` ${Math.round(r.reopen.listeningMs)} ms; to the first get-node answer ${Math.round(r.reopen.firstAnswerMs)} ms `
    + `(the first start, on an empty directory: ${Math.round(r.firstStartMs)} ms to \`listening\`).`)
  return lines.join('\n')
}
