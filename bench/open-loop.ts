// The open-loop (fixed-rate) load generator: requests leave on a schedule
// (schedule.ts), whether or not earlier answers have arrived, over an undici
// Pool of a fixed number of connections; a request that finds every
// connection busy waits in the pool, and that wait counts. Latency runs from
// each request's intended send time (coordinated omission corrected), and a
// request belongs to the measured window by its intended time, so a slow
// answer that arrives after the window still counts.
//
// The generator shares the machine with the server: it records how late it
// sent each request and reports when it did not keep to its schedule.
import { Histogram } from './histogram'
import { count, createPool, drain, loadResult, newTally, send, type LoadResult, type WindowOptions } from './load'
import { FixedRateSchedule, correctedLatencyMs, inWindow, keptSchedule } from './schedule'
import { sleep } from './wait'

export interface OpenLoopOptions extends WindowOptions {
  connections: number
  ratePerS: number
}

export interface OpenLoopResult extends LoadResult {
  ratePerS: number
  /** Requests the window scheduled, and how many of them were sent. */
  scheduled: number
  sent: number
  /** How late the generator sent the window's requests (ms). */
  sendLagP99Ms: number
  sendLagMaxMs: number
  keptSchedule: boolean
}


export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const timeoutMs = o.timeoutMs ?? 10_000
  const pool = createPool(o.origin, { connections: o.connections, pipelining: 1 }, timeoutMs)
  const hist = new Histogram()
  const lag = new Histogram()
  const tally = newTally()
  const schedule = new FixedRateSchedule(o.ratePerS, performance.now())
  const window = { startMs: schedule.startMs + o.warmupMs, endMs: schedule.startMs + o.warmupMs + o.durationMs }
  let inFlight = 0
  let sent = 0
  let completed = 0
  let ok = 0
  let bytesIn = 0

  const issue = (intendedMs: number): void => {
    const r = o.next()
    const measured = inWindow(intendedMs, window)
    if (measured) {
      sent++
      // Read per request: a batch due at once leaves over the time its sends take.
      lag.record((performance.now() - intendedMs) * 1000)
    }
    inFlight++
    send(pool, r, true, (outcome) => {
      inFlight--
      if (!measured) return
      count(tally, outcome, r.method, r.path)
      if (outcome.error !== undefined) return
      completed++
      bytesIn += outcome.bytes
      if (outcome.status >= 200 && outcome.status < 300) ok++
      hist.record(correctedLatencyMs(intendedMs, performance.now()) * 1000)
    })
  }

  let cpu0 = process.cpuUsage()
  let cpu = cpu0
  const windowTimers = [
    setTimeout(() => { o.onWindow?.('start'); cpu0 = process.cpuUsage() }, o.warmupMs),
    setTimeout(() => { cpu = process.cpuUsage(cpu0); o.onWindow?.('end') }, o.warmupMs + o.durationMs),
  ]
  // Sends everything due, then sleeps until the next intended time (timers
  // fire no sooner than ~1 ms: requests due meanwhile leave together, late
  // by up to that much, and the lag histogram shows it).
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now()
      for (;;) {
        if (schedule.nextMs() >= window.endMs) return resolve()
        const at = schedule.takeDue(now)
        if (at === undefined) break
        issue(at)
      }
      setTimeout(tick, Math.max(0, schedule.nextMs() - performance.now()))
    }
    tick()
  })
  const untilEnd = window.endMs - performance.now()
  if (untilEnd > 0) await sleep(untilEnd + 5)
  const unfinished = await drain(() => inFlight, o.graceMs ?? 10_000)
  for (const t of windowTimers) clearTimeout(t)
  await pool.destroy().catch(() => undefined)

  const scheduled = schedule.scheduledIn(window.startMs, window.endMs)
  const lagSummary = lag.summary()
  const sendLagP99Ms = lagSummary.p99
  return {
    ...loadResult({ connections: o.connections, pipelining: 1 }, o.durationMs, { completed, ok, bytesIn, unfinished }, hist, tally, cpu),
    ratePerS: o.ratePerS,
    scheduled,
    sent,
    sendLagP99Ms,
    sendLagMaxMs: lagSummary.max,
    keptSchedule: keptSchedule({ scheduled, sent, sendLagP99Ms }),
  }
}
