// The open-loop goal, as the bench prints it: p99 < 5 ms at 50% of
// the maximum (durable writes: or within 2 ms of the disk's fsync p99 where
// that is higher), < 10 ms at 75%; no goal at 25%.
import t from 'tap'
import type { LatencySummary } from '../../../bench/histogram'
import { judge, limitFor, verdictText } from '../../../bench/latency-goal'
import { openLoopMarkdown, type Measured, type OpenLoopRun } from '../../../bench/report'

const clean = { failures: 0, keptSchedule: true }

t.test('the limits', async (t) => {
  t.same(limitFor(0.5, 'read', 12), { limitMs: 5, basis: 'absolute' }, 'a read never waits for the disk')
  t.same(limitFor(0.5, 'durable', 3), { limitMs: 5, basis: 'absolute' }, 'fsync p99 below 5 ms: the 5 ms stand')
  t.same(limitFor(0.5, 'durable', 5), { limitMs: 5, basis: 'absolute' })
  t.same(limitFor(0.5, 'durable', 7.5), { limitMs: 9.5, basis: 'fsync' }, 'fsync p99 above 5 ms: within 2 ms of it')
  t.same(limitFor(0.5, 'durable', undefined), { limitMs: 5, basis: 'absolute' })
  t.same(limitFor(0.75, 'durable', 20), { limitMs: 10, basis: 'absolute' }, '75%: 10 ms whatever the disk')
  t.equal(limitFor(0.25, 'read', 1), undefined, 'no goal at 25%')
})

t.test('met and missed', async (t) => {
  t.equal(judge({ fraction: 0.5, p99Ms: 4.9, ...clean }, 'read', 1)?.met, true)
  t.equal(judge({ fraction: 0.5, p99Ms: 5, ...clean }, 'read', 1)?.met, false, 'under, not at')
  t.equal(judge({ fraction: 0.5, p99Ms: 9, ...clean }, 'durable', 7.5)?.met, true)
  t.equal(judge({ fraction: 0.5, p99Ms: 9, ...clean }, 'read', 7.5)?.met, false)
  t.equal(judge({ fraction: 0.75, p99Ms: 9.9, ...clean }, 'durable', 1)?.met, true)
  t.equal(judge({ fraction: 0.75, p99Ms: 12, ...clean }, 'durable', 1)?.met, false)
  t.equal(judge({ fraction: 0.25, p99Ms: 1, ...clean }, 'read', 1), undefined)
})

t.test('failed requests or a generator behind its schedule never meet the goal', async (t) => {
  const failed = { fraction: 0.5, p99Ms: 1, failures: 3, keptSchedule: true }
  const behind = { fraction: 0.5, p99Ms: 1, failures: 0, keptSchedule: false }
  const vf = judge(failed, 'read', 1)!
  const vb = judge(behind, 'read', 1)!
  t.equal(vf.met, false)
  t.equal(vb.met, false)
  t.equal(verdictText(vf, failed), '< 5 ms: missed (failed requests)')
  t.equal(verdictText(vb, behind), '< 5 ms: missed (generator behind)')
})

t.test('the printed verdict says when the fsync p99 set the limit', async (t) => {
  const run = { fraction: 0.5, p99Ms: 8, ...clean }
  t.equal(verdictText(judge(run, 'durable', 7.5)!, clean), '< 9.50 ms (fsync p99 + 2): met')
  t.equal(verdictText(judge({ ...run, fraction: 0.75 }, 'durable', 7.5)!, clean), '< 10 ms: met')
})

t.test('the open-loop table prints each rate with its percentiles and verdict', async (t) => {
  const latency = (p99: number): LatencySummary => ({ p50: 1, p90: 2, p99, p999: p99 + 1, max: p99 + 2, mean: 1 })
  const m = (p99: number): Measured => ({
    rps: 1000, okRps: 1000, latency: latency(p99), completed: 10_000, windowS: 10, statuses: { 200: 10_000 }, non2xx: 0, errors: 0,
    errorMessages: {}, non2xxSamples: [], unfinished: 0, bytesIn: 0, targetCores: 1, generatorCores: 0.2, otherCores: 0, peakRssAnonMb: 100,
    frontCpuUsPerRequest: 20,
  })
  const run = (fraction: number, p99: number, kept: boolean): OpenLoopRun => ({
    fraction, ratePerS: 4000 * fraction, service: m(p99), scheduled: 1000, sent: 1000, sendLagP99Ms: kept ? 1.1 : 3, sendLagMaxMs: 5,
    keptSchedule: kept, verdict: judge({ fraction, p99Ms: p99, failures: 0, keptSchedule: kept }, 'durable', 7.5),
  })
  const lines = openLoopMarkdown(64, [{ name: 'put-node', tenants: 16, connections: 64, maxRps: 4000, latencyGoal: 'durable', runs: [run(0.25, 3, true), run(0.5, 9, true), run(0.75, 9, false)] }])
  const rows = lines.filter((l) => l.startsWith('| put-node'))
  t.equal(rows.length, 3)
  t.match(rows[0]!, /^\| put-node \| 16 \| 25% of 4000 \| 1000 \| 1000 \| 1.00 \| 2.00 \| 3.00 \| 4.00 \| 0 \/ 0 \| 1.10 \| 1.00 \|  \|/)
  t.match(rows[1]!, /\| < 9.50 ms \(fsync p99 \+ 2\): met \|/)
  t.match(rows[2]!, /\| 3.00 \(behind\) \| .* \| < 10 ms: missed \(generator behind\) \|/)
})
