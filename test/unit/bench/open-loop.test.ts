// The open-loop bench's pure parts: the schedule, the coordinated-omission
// correction, the window, the generator's own keep-up check, the percentiles
// and the front thread's CPU per request. No timing assertions: the one run
// against a server only asserts lower bounds the server's own delays impose.
import t from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Histogram } from '../../../bench/histogram'
import { runOpenLoop } from '../../../bench/open-loop'
import { parseOptions, parseTenants } from '../../../bench/options'
import { cpuMicrosPerRequest, readCpuSeconds } from '../../../bench/proc'
import { FixedRateSchedule, OPEN_LOOP_FRACTIONS, correctedLatencyMs, inWindow, keptSchedule, rateFor } from '../../../bench/schedule'

t.test('the schedule sends request i at start + i / rate, whatever happened before', async (t) => {
  const s = new FixedRateSchedule(1000, 100)
  t.equal(s.intervalMs, 1)
  t.equal(s.intendedAt(0), 100)
  t.equal(s.intendedAt(250), 350)
  t.equal(s.dueBy(99.9), 0)
  t.equal(s.dueBy(100), 1)
  t.equal(s.dueBy(104.5), 5)
  t.equal(s.takeDue(99), undefined, 'nothing is due before the start')
  // The generator was stalled until 103.5: the four due requests keep their own intended times.
  const taken: number[] = []
  for (let at = s.takeDue(103.5); at !== undefined; at = s.takeDue(103.5)) taken.push(at)
  t.same(taken, [100, 101, 102, 103])
  t.equal(s.taken, 4)
  t.equal(s.nextMs(), 104)
  t.throws(() => new FixedRateSchedule(0, 0), RangeError)
})

t.test('scheduledIn counts the intended times in [from, to)', async (t) => {
  const s = new FixedRateSchedule(4, 0) // every 250 ms
  t.equal(s.scheduledIn(0, 1000), 4, '0, 250, 500, 750')
  t.equal(s.scheduledIn(100, 1000), 3)
  t.equal(s.scheduledIn(250, 250), 0)
  t.equal(s.scheduledIn(-500, 0), 0, 'nothing before the start')
  t.equal(s.scheduledIn(1000, 2000), 4)
})

t.test('latency runs from the intended send time, so queueing behind a stall counts', async (t) => {
  // A 100 ms stall at a rate of 1 per ms: request k, intended at k ms, is answered at 100 ms + its 1 ms of service.
  const h = new Histogram()
  for (let k = 0; k < 100; k++) h.record(correctedLatencyMs(k, 101 + k * 0.01) * 1000)
  t.ok(h.quantile(0.5) >= 50_000, 'the median request waited about half the stall')
  t.ok(h.quantile(0.99) >= 99_000, 'the first request waited the whole stall')
  t.equal(correctedLatencyMs(10, 9), 0, 'never negative')
})

t.test('a request belongs to the window by its intended time', async (t) => {
  const w = { startMs: 1000, endMs: 2000 }
  t.ok(inWindow(1000, w))
  t.ok(inWindow(1999.9, w))
  t.notOk(inWindow(2000, w))
  t.notOk(inWindow(999, w))
})

t.test('the generator kept its schedule only when it sent nearly everything, not late', async (t) => {
  t.ok(keptSchedule({ scheduled: 1000, sent: 1000, sendLagP99Ms: 1.1 }))
  t.notOk(keptSchedule({ scheduled: 1000, sent: 1000, sendLagP99Ms: 2.5 }), 'late')
  t.notOk(keptSchedule({ scheduled: 1000, sent: 900, sendLagP99Ms: 0.5 }), 'did not send everything')
})

t.test('the rates are 25, 50 and 75% of the measured maximum', async (t) => {
  t.same(OPEN_LOOP_FRACTIONS.map((f) => rateFor(12_000, f)), [3000, 6000, 9000])
  t.equal(rateFor(2, 0.25), 1, 'at least 1 req/s')
})

t.test('percentiles: exact below 128 us, within 1/64 above, never lower than the value', async (t) => {
  const h = new Histogram()
  t.equal(h.quantile(0.99), 0, 'empty')
  for (let v = 1; v <= 100; v++) h.record(v)
  t.equal(h.quantile(0.5), 50)
  t.equal(h.quantile(0.99), 99)
  t.equal(h.quantile(1), 100)
  const big = new Histogram()
  for (let i = 0; i < 999; i++) big.record(1000)
  big.record(50_000)
  t.ok(big.quantile(0.5) >= 1000 && big.quantile(0.5) <= 1000 * (1 + 1 / 64))
  t.equal(big.quantile(0.999), big.quantile(0.5), 'p99.9 of 1000 samples is the 999th')
  t.equal(big.summary().max, 50)
})

t.test('front thread CPU per request', async (t) => {
  t.equal(cpuMicrosPerRequest(0.5, 20_000), 25)
  t.ok(Number.isNaN(cpuMicrosPerRequest(0.5, 0)))
})

t.test('the main thread\'s CPU is read from /proc/<pid>/task/<pid>/stat', { skip: process.platform !== 'linux' }, async (t) => {
  const before = readCpuSeconds(process.pid, process.pid)
  const start = process.cpuUsage()
  let x = 0
  // Burn 300 ms of this (main) thread's CPU; /proc counts it in 10 ms ticks.
  while (process.cpuUsage(start).user < 300_000) x += Math.sqrt(x + 1)
  const used = readCpuSeconds(process.pid, process.pid) - before
  t.ok(x > 0)
  t.ok(used >= 0.2, `main thread used ${used} s of CPU`)
  t.ok(readCpuSeconds(process.pid) >= used, 'the process counts at least its main thread')
})

t.test('--tenants: one count or a list; the full run reports 16 and 1', async (t) => {
  t.same(parseTenants('1'), [1])
  t.same(parseTenants('16,1'), [16, 1])
  t.throws(() => parseTenants('17'), { message: /--tenants needs/ })
  t.throws(() => parseTenants(''), { message: /--tenants needs/ })
  t.same(parseOptions([]).tenants, [16, 1])
  t.same(parseOptions(['--quick']).tenants, [16])
  t.same(parseOptions(['--quick', '--tenants', '1']).tenants, [1])
})

t.test('against a server that answers one request at a time, the open-loop latency shows the queue', async (t) => {
  // 20 ms per request, one connection, 100 requests/s offered: the queue grows by ~10 ms per request.
  const pending: Array<() => void> = []
  let busy = false
  const next = (): void => {
    const run = pending.shift()
    if (run === undefined) { busy = false; return }
    busy = true
    run()
  }
  const server: Server = createServer((_req, res) => {
    pending.push(() => setTimeout(() => { res.end('ok'); next() }, 20))
    if (!busy) next()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  const { port } = server.address() as AddressInfo
  const r = await runOpenLoop({
    origin: `http://127.0.0.1:${port}`, connections: 1, ratePerS: 100, warmupMs: 0, durationMs: 500,
    next: () => ({ method: 'GET', path: '/', headers: {} }), graceMs: 10_000,
  })
  t.equal(r.scheduled, 50)
  t.equal(r.sent, 50)
  t.equal(r.completed, 50, 'every request of the window is counted, also those answered after it')
  t.equal(r.non2xx + r.errors + r.unfinished, 0)
  // The 50th request, intended at 490 ms, cannot be answered before 50 x 20 ms = 1000 ms.
  t.ok(r.latency.max >= 500, `max ${r.latency.max} ms includes the queue`)
  t.ok(r.latency.p50 >= 200, `p50 ${r.latency.p50} ms includes the queue (a closed loop would say ~20 ms)`)
})
