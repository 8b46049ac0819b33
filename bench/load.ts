// The load generator: an undici Pool (keep-alive, N connections, HTTP/1.1
// pipelining) kept full by connections x pipelining request slots. Two modes:
//  - runLoad: warm-up, then a fixed measuring window; only responses that
//    complete inside the window count, and every answer is accounted for:
//    status codes, non-2xx, transport errors, requests left unfinished.
//  - runAll: send a finite list of requests (the data loads), as fast as the
//    same pool allows, and report what failed.
// Requests are dispatched with `blocking: false, idempotent: true`: without
// both, undici sends the next request on a socket only after the previous
// answer's headers (it blocks every non-HEAD request and never pipelines
// non-idempotent ones), so `pipelining` would silently mean 1. The bench
// never retries, so idempotency is not relied upon.
import { Pool } from 'undici'
import type { Dispatcher } from 'undici'
import { Histogram, type LatencySummary } from './histogram'
import { sleep } from './wait'

export type BenchMethod = 'GET' | 'PUT' | 'POST'

export interface BenchRequest {
  method: BenchMethod
  path: string
  headers: Readonly<Record<string, string>>
  body?: string
}

export interface PoolShape {
  connections: number
  pipelining: number
}

/** What every load run has: where, how long, which requests. */
export interface WindowOptions {
  origin: string
  warmupMs: number
  durationMs: number
  next: () => BenchRequest
  /** Per-request headers and body timeout; a request over it counts as an error. */
  timeoutMs?: number
  /** How long to wait after the window for requests still in flight. */
  graceMs?: number
  /** Called when the measuring window opens and closes (for samplers). */
  onWindow?: (phase: 'start' | 'end') => void
}

export interface LoadOptions extends PoolShape, WindowOptions {}

export interface Tally {
  statuses: Record<string, number>
  non2xx: number
  errors: number
  /** Transport errors by message. */
  errorMessages: Record<string, number>
  /** The first few non-2xx answers: status and the start of the body. */
  non2xxSamples: string[]
}

export interface LoadResult extends PoolShape, Tally {
  windowS: number
  /** Answers (any status) completed inside the window. */
  completed: number
  /** completed / windowS */
  rps: number
  /** 2xx answers per second. */
  okRps: number
  latency: LatencySummary
  /** Still in flight when the grace period ended; aborted, not counted. */
  unfinished: number
  bytesIn: number
  /** CPU used by the generator's own process during the window, in cores. */
  generatorCores: number
}

export interface BatchResult extends Tally {
  sent: number
  seconds: number
  rate: number
}

const SAMPLE_LIMIT = 3
const SAMPLE_BYTES = 300

export function newTally(): Tally {
  return { statuses: {}, non2xx: 0, errors: 0, errorMessages: {}, non2xxSamples: [] }
}

export function createPool(origin: string, shape: PoolShape, timeoutMs: number): Pool {
  return new Pool(origin, {
    connections: shape.connections,
    pipelining: shape.pipelining,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  })
}

export interface Outcome {
  startMs: number
  status: number
  bytes: number
  body: string | undefined
  error: Error | undefined
}

/** Sends one request; `done` is called exactly once. */
export function send(pool: Pool, r: BenchRequest, wantBodyOnError: boolean, done: (o: Outcome) => void): void {
  const startMs = performance.now()
  let status = 0
  let bytes = 0
  let kept: Buffer[] | undefined
  const options: Dispatcher.DispatchOptions = {
    method: r.method, path: r.path, headers: r.headers, body: r.body, blocking: false, idempotent: true,
  }
  // The legacy callback handler: undici passes it through as is, where the
  // controller-style one is wrapped and has its headers parsed per answer.
  const handler: Dispatcher.DispatchHandler = {
    onConnect: () => undefined,
    onHeaders: (statusCode) => {
      status = statusCode
      if (wantBodyOnError && (statusCode < 200 || statusCode >= 300)) kept = []
      return true
    },
    onData: (chunk) => {
      bytes += chunk.length
      if (kept !== undefined && bytes <= SAMPLE_BYTES * 4) kept.push(chunk)
      return true
    },
    onComplete: () => done({ startMs, status, bytes, body: kept === undefined ? undefined : Buffer.concat(kept).toString('utf8'), error: undefined }),
    onError: (err) => done({ startMs, status, bytes, body: undefined, error: err }),
  }
  pool.dispatch(options, handler)
}

export function count(t: Tally, o: Outcome, method: string, path: string): void {
  if (o.error !== undefined) {
    t.errors++
    const key = `${o.error.name}: ${o.error.message}`.slice(0, 160)
    t.errorMessages[key] = (t.errorMessages[key] ?? 0) + 1
    return
  }
  const key = String(o.status)
  t.statuses[key] = (t.statuses[key] ?? 0) + 1
  if (o.status < 200 || o.status >= 300) {
    t.non2xx++
    if (t.non2xxSamples.length < SAMPLE_LIMIT) {
      t.non2xxSamples.push(`${o.status} ${method} ${path.slice(0, 120)}: ${(o.body ?? '').slice(0, SAMPLE_BYTES)}`)
    }
  }
}


export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const timeoutMs = o.timeoutMs ?? 10_000
  const pool = createPool(o.origin, o, timeoutMs)
  const hist = new Histogram()
  const tally = newTally()
  let measuring = false
  let stopped = false
  let inFlight = 0
  let completed = 0
  let ok = 0
  let bytesIn = 0

  const issue = (): void => {
    const r = o.next()
    inFlight++
    send(pool, r, true, (outcome) => {
      inFlight--
      if (measuring) {
        count(tally, outcome, r.method, r.path)
        if (outcome.error === undefined) {
          completed++
          bytesIn += outcome.bytes
          if (outcome.status >= 200 && outcome.status < 300) ok++
          hist.record((performance.now() - outcome.startMs) * 1000)
        }
      }
      if (stopped) return
      // After a transport error, yield first: a dead server must not spin the loop.
      if (outcome.error !== undefined) setTimeout(issue, 5)
      else issue()
    })
  }

  for (let i = 0; i < o.connections * o.pipelining; i++) issue()
  const { windowMs, cpu } = await measuredWindow(o, (on) => {
    measuring = on
    stopped = !on
  })

  const unfinished = await drain(() => inFlight, o.graceMs ?? 10_000)
  await pool.destroy().catch(() => undefined)
  return loadResult(o, windowMs, { completed, ok, bytesIn, unfinished }, hist, tally, cpu)
}

/**
 * The warm-up, then the measuring window: `measuring(true)` as it opens,
 * `measuring(false)` as it closes (the load stops sending then). Returns its
 * length and the generator's own CPU during it.
 */
export async function measuredWindow(o: Pick<WindowOptions, 'warmupMs' | 'durationMs' | 'onWindow'>, measuring: (on: boolean) => void): Promise<{ windowMs: number; cpu: NodeJS.CpuUsage }> {
  await sleep(o.warmupMs)
  measuring(true)
  o.onWindow?.('start')
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await sleep(o.durationMs)
  const windowMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  measuring(false)
  o.onWindow?.('end')
  return { windowMs, cpu }
}

/** Waits up to `graceMs` for the requests still in flight; returns how many are left. */
export async function drain(inFlight: () => number, graceMs: number): Promise<number> {
  const graceEnd = performance.now() + graceMs
  while (inFlight() > 0 && performance.now() < graceEnd) await sleep(20)
  return inFlight()
}

/** The figures of a measured window of `windowMs`, `cpu` being the generator's own CPU during it. */
export function loadResult(
  shape: PoolShape, windowMs: number, c: { completed: number; ok: number; bytesIn: number; unfinished: number },
  hist: Histogram, tally: Tally, cpu: NodeJS.CpuUsage,
): LoadResult {
  const windowS = windowMs / 1000
  return {
    connections: shape.connections,
    pipelining: shape.pipelining,
    windowS,
    completed: c.completed,
    rps: c.completed / windowS,
    okRps: c.ok / windowS,
    latency: hist.summary(),
    ...tally,
    unfinished: c.unfinished,
    bytesIn: c.bytesIn,
    generatorCores: (cpu.user + cpu.system) / 1000 / windowMs,
  }
}

/** Sends every request of `requests` (a finite sequence) and reports what failed. */
export async function runAll(origin: string, shape: PoolShape, requests: Iterable<BenchRequest>, timeoutMs = 60_000): Promise<BatchResult> {
  const pool = createPool(origin, shape, timeoutMs)
  const tally = newTally()
  const it = requests[Symbol.iterator]()
  let sent = 0
  const t0 = performance.now()
  await new Promise<void>((resolve) => {
    let active = 0
    let exhausted = false
    const issue = (): void => {
      const step = it.next()
      if (step.done === true) {
        exhausted = true
        if (active === 0) resolve()
        return
      }
      const r = step.value
      active++
      sent++
      send(pool, r, true, (outcome) => {
        active--
        count(tally, outcome, r.method, r.path)
        if (!exhausted) issue()
        else if (active === 0) resolve()
      })
    }
    for (let i = 0; i < shape.connections * shape.pipelining && !exhausted; i++) issue()
  })
  const seconds = (performance.now() - t0) / 1000
  await pool.destroy().catch(() => undefined)
  return { ...tally, sent, seconds, rate: sent / seconds }
}
