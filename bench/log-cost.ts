// `node dist/bench/log-cost.js`: what the access log, traces (and whatever
// else a variant switches) cost per request, measured as CPU time of the server,
// not throughput: on a shared machine req/s is noise, the CPU a fixed number
// of requests takes much less. One server per variant (LOG_LEVEL=info and
// silent by default, optionally other builds), all started and loaded once,
// then measured in turn, round after round (interleaved, order alternating),
// the same fixed list of get-node (or put-node) requests each time; medians at the end.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { startChild, type Child } from './child'
import { cleanUpOnSignals, runCleanups } from './cleanup'
import { TENANTS, consentsPath, customerBody, customerName, nodePath, tenantHeaders } from './fixture'
import { runAll, type BenchRequest, type PoolShape } from './load'
import { readCpuSeconds, readMachineBusySeconds } from './proc'
import { pick, seeded } from './random'
import { SERVER_ENTRY, prepareService, tempDir } from './service'
import { fetchToken } from './tokens'

const USAGE = `usage: node dist/bench/log-cost.js [options]
  --scenario S       get-node (default) or put-node (upserts of the loaded customers' nodes)
  --levels a,b       LOG_LEVEL of each variant (default info,silent)
  --traces a,b       off and/or on: each variant with traces off, on, or both (on: every span sent
                     by OTLP/HTTP to a sink in this process that takes and drops it) (default off)
  --entry PATH[@L]   another build's dist/src/main.js: each level runs on each entry, or only level L
                     (repeatable; default this build)
  --rounds N         measured rounds, each variant once per round (default 5)
  --requests N       requests per measurement (default 100000)
  --connections N    (default 64)
  --cpu-prof DIR     each server writes a .cpuprofile per thread into DIR/<variant> when it stops
  --callgrind DIR    run the servers under valgrind's callgrind and count instructions per request
                     instead of CPU time: the same on a busy machine as on a quiet one, ~50x slower
                     (use --requests 5000); the dumps go to DIR
  The reference without request ids, header, metrics and line: bench/without-request-extras.sh`

const SCENARIO_NAMES = ['get-node', 'put-node'] as const
const TRACE_SETTINGS = ['off', 'on'] as const
type TraceSetting = (typeof TRACE_SETTINGS)[number]
type ScenarioName = (typeof SCENARIO_NAMES)[number]

interface Options {
  scenario: ScenarioName
  levels: string[]
  traces: TraceSetting[]
  entries: string[]
  rounds: number
  requests: number
  connections: number
  cpuProfDir: string | undefined
  callgrindDir: string | undefined
}

function parse(argv: readonly string[]): Options {
  const o: Options = { scenario: 'get-node', levels: ['info', 'silent'], traces: ['off'], entries: [], rounds: 5, requests: 100_000, connections: 64, cpuProfDir: undefined, callgrindDir: undefined }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const value = argv[++i]
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`)
    if (flag === '--scenario') {
      if (!(SCENARIO_NAMES as readonly string[]).includes(value)) throw new Error(`--scenario is one of ${SCENARIO_NAMES.join(', ')}\n${USAGE}`)
      o.scenario = value as ScenarioName
    } else if (flag === '--levels') o.levels = value.split(',')
    else if (flag === '--traces') {
      const settings = value.split(',')
      if (!settings.every((v) => (TRACE_SETTINGS as readonly string[]).includes(v))) throw new Error(`--traces takes off and on, got "${value}"\n${USAGE}`)
      o.traces = settings as TraceSetting[]
    }
    else if (flag === '--entry') o.entries.push(value)
    else if (flag === '--rounds') o.rounds = Number(value)
    else if (flag === '--requests') o.requests = Number(value)
    else if (flag === '--connections') o.connections = Number(value)
    else if (flag === '--cpu-prof') o.cpuProfDir = value
    else if (flag === '--callgrind') o.callgrindDir = value
    else throw new Error(`unknown option ${flag}\n${USAGE}`)
  }
  if (o.entries.length === 0) o.entries.push(SERVER_ENTRY)
  return o
}

const CUSTOMERS = 320
const LOAD: PoolShape = { connections: 32, pipelining: 1 }

interface Variant {
  label: string
  child: Child
  requests: BenchRequest[]
  front: number[]
  process: number[]
  others: number[]
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** Where traced variants send their spans: an OTLP/HTTP endpoint that reads each export and answers 200; counts the bytes. */
async function startTraceSink(): Promise<{ server: Server; url: string; bytes: () => number }> {
  let bytes = 0
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => { bytes += chunk.length })
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: () => bytes }
}

async function startVariant(o: Options, entry: string, level: string, label: string, traceEndpoint?: string): Promise<Variant> {
  const layout = prepareService(tempDir('log-cost-'))
  const nodeArgs = o.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(o.cpuProfDir, label.replace(/\W+/g, '_'))}`]
  const wrapper = o.callgrindDir === undefined ? undefined : callgrindCommand(o.callgrindDir)
  const child = await startChild(label, entry, [
    '--port', '0', '--data-dir', layout.dataDir, '--bootstrap', layout.bootstrap, '--master-key-file', layout.masterKey, '--workers', '2',
  ], { nodeArgs, wrapper, env: { ...process.env, LOG_LEVEL: level, ...(traceEndpoint === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: traceEndpoint }) }, keepOutputChars: 1 << 16, startTimeoutMs: wrapper === undefined ? 60_000 : 900_000 })
  const t = TENANTS[0]!
  const token = await fetchToken(child.url, t)
  const consent = await fetch(`${child.url}${consentsPath(t.id)}`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'log-cost' }),
  }).then(async (r) => ((await r.json()) as { consentReference: string }).consentReference)
  const h = tenantHeaders(t, token, consent)
  const puts = Array.from({ length: CUSTOMERS }, (_, i): BenchRequest => ({ method: 'PUT', path: nodePath(t.id, 'customer', `c${i}`), headers: h.write, body: customerBody(i, customerName(i)) }))
  const loaded = await runAll(child.url, LOAD, puts)
  if (loaded.non2xx + loaded.errors > 0) throw new Error(`${label}: loading failed: ${JSON.stringify(loaded.statuses)}`)
  const random = seeded(14)
  const requests = Array.from({ length: o.requests }, (_, n): BenchRequest => {
    const i = pick(random, CUSTOMERS)
    const path = nodePath(t.id, 'customer', `c${i}`)
    // put-node: the loaded customers rewritten with other values (their ages move on with each request).
    return o.scenario === 'get-node' ? { method: 'GET', path, headers: h.read } : { method: 'PUT', path, headers: h.write, body: customerBody(i + n, customerName(i)) }
  })
  return { label, child, requests, front: [], process: [], others: [] }
}

/** valgrind with callgrind, instrumenting nothing until a measurement turns it on (which also makes the start faster); one dump file per thread. */
function callgrindCommand(dir: string): string[] {
  mkdirSync(dir, { recursive: true })
  return ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${join(dir, 'cg.%p')}`]
}

/** Instructions since the last dump: the front thread's (thread 1) and all threads'. */
function dumpInstructions(dir: string, pid: number): { front: number; all: number } {
  const before = new Set(readdirSync(dir))
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' })
  let front = 0
  let all = 0
  for (const file of readdirSync(dir)) {
    if (before.has(file) || !file.startsWith(`cg.${pid}.`)) continue
    const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(join(dir, file), 'utf8'))
    const n = totals === null ? 0 : Number(totals[1])
    all += n
    if (file.endsWith('-01')) front += n
  }
  return { front, all }
}

/** One measurement: the fixed request list; CPU µs per request of the front thread and of the whole server, and other processes' cores. */
async function measure(v: Variant, o: Options): Promise<void> {
  const pid = v.child.pid
  if (o.callgrindDir !== undefined) {
    // Instrumentation stays on once on (turning it off and on again gave nonsense counts); zeroed before each measurement.
    execFileSync('callgrind_control', ['--instr=on', String(pid)], { stdio: 'ignore' })
    execFileSync('callgrind_control', ['--zero', String(pid)], { stdio: 'ignore' })
    const r = await runAll(v.child.url, { connections: o.connections, pipelining: 1 }, v.requests)
    const counted = dumpInstructions(o.callgrindDir, pid)
    if (r.non2xx + r.errors > 0) throw new Error(`${v.label}: ${r.non2xx} non-2xx, ${r.errors} errors: ${JSON.stringify(r.statuses)}`)
    v.front.push(counted.front / r.sent)
    v.process.push(counted.all / r.sent)
    v.others.push(0)
    console.log(`  ${v.label}: front ${Math.round(v.front.at(-1)!)} instructions/req, process ${Math.round(v.process.at(-1)!)}`)
    return
  }
  const front0 = readCpuSeconds(pid, pid)
  const proc0 = readCpuSeconds(pid)
  const busy0 = readMachineBusySeconds()
  const r = await runAll(v.child.url, { connections: o.connections, pipelining: 1 }, v.requests)
  const front = readCpuSeconds(pid, pid) - front0
  const proc = readCpuSeconds(pid) - proc0
  const busy = readMachineBusySeconds() - busy0
  if (r.non2xx + r.errors > 0) throw new Error(`${v.label}: ${r.non2xx} non-2xx, ${r.errors} errors: ${JSON.stringify(r.statuses)}`)
  v.front.push((front * 1e6) / r.sent)
  v.process.push((proc * 1e6) / r.sent)
  // Everything busy on the machine minus this server, in cores (the generator, this script, other sessions).
  v.others.push((busy - proc) / r.seconds)
  console.log(`  ${v.label}: ${Math.round(r.rate)} req/s, front ${v.front.at(-1)!.toFixed(2)} µs/req, process ${v.process.at(-1)!.toFixed(2)} µs/req, others ${v.others.at(-1)!.toFixed(2)} cores`)
}

async function main(): Promise<void> {
  cleanUpOnSignals()
  const o = parse(process.argv.slice(2))
  const variants: Variant[] = []
  const sink = o.traces.includes('on') ? await startTraceSink() : undefined
  for (const [e, spec] of o.entries.entries()) {
    const [entry, only] = spec.split('@') as [string, string | undefined]
    for (const level of only === undefined ? o.levels : [only]) {
      for (const traces of o.traces) {
        const label = `${o.entries.length > 1 ? `entry${e}:` : ''}${level}${o.traces.length > 1 ? `:traces-${traces}` : ''}`
        variants.push(await startVariant(o, entry, level, label, traces === 'on' ? sink!.url : undefined))
      }
    }
  }
  console.log(`${variants.length} servers loaded; warm-up round`)
  for (const v of variants) await measure(v, o)
  for (const v of variants) v.front.length = v.process.length = v.others.length = 0
  for (let round = 0; round < o.rounds; round++) {
    console.log(`round ${round + 1}/${o.rounds}`)
    const order = round % 2 === 0 ? variants : [...variants].reverse()
    for (const v of order) await measure(v, o)
  }
  for (const v of variants) await v.child.stop()
  if (sink !== undefined) {
    sink.server.close()
    console.log(`\nthe trace sink took ${(sink.bytes() / 2 ** 20).toFixed(1)} MB of spans`)
  }
  const base = variants.at(-1)!
  console.log(`\n${o.requests} ${o.scenario} requests per measurement, ${o.connections} connections, ${o.rounds} rounds interleaved; medians (range); cost against ${base.label}\n`)
  const unit = o.callgrindDir === undefined ? 'µs/req' : 'instructions/req'
  console.log(`| variant | front ${unit} | process ${unit} | front cost | process cost | other cores |`)
  console.log('|---|---:|---:|---:|---:|---:|')
  const range = (xs: number[]): string => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`
  const cost = (xs: number[], b: number[]): string => `${(((median(xs) - median(b)) / median(b)) * 100).toFixed(1)}%`
  for (const v of variants) {
    console.log(`| ${v.label} | ${range(v.front)} | ${range(v.process)} | ${cost(v.front, base.front)} | ${cost(v.process, base.process)} | ${median(v.others).toFixed(2)} |`)
  }
}

main().then(() => runCleanups(), async (err: unknown) => {
  console.error(err instanceof Error ? err.message : err)
  await runCleanups()
  process.exitCode = 1
})
