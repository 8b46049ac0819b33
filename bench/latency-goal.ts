// The open-loop latency goal: p99 under 5 ms at 50% of a
// scenario's maximum throughput and under 10 ms at 75%. A durable write waits
// for at least one fdatasync, so where the disk's own fsync p99 is higher than
// the 5 ms, the 50% goal for durable writes becomes "within 2 ms of the fsync
// p99" (and the verdict says so). Reads never wait for the disk.

export const P99_AT_50_MS = 5
export const P99_AT_75_MS = 10
export const FSYNC_SLACK_MS = 2

/** Which scenarios the goal applies to, and whether they wait for the disk. */
export type LatencyGoalKind = 'read' | 'durable'

export interface GoalVerdict {
  fraction: number
  p99Ms: number
  limitMs: number
  /** 'fsync': the limit is the fsync p99 + 2 ms (it was higher than the 5 ms). */
  basis: 'absolute' | 'fsync'
  met: boolean
}

/** The limit at a fraction of the maximum (0.5 or 0.75); undefined where the issue sets none (0.25). */
export function limitFor(fraction: number, kind: LatencyGoalKind, fsyncP99Ms: number | undefined): { limitMs: number; basis: GoalVerdict['basis'] } | undefined {
  if (fraction === 0.75) return { limitMs: P99_AT_75_MS, basis: 'absolute' }
  if (fraction !== 0.5) return undefined
  if (kind === 'durable' && fsyncP99Ms !== undefined && fsyncP99Ms > P99_AT_50_MS) {
    return { limitMs: fsyncP99Ms + FSYNC_SLACK_MS, basis: 'fsync' }
  }
  return { limitMs: P99_AT_50_MS, basis: 'absolute' }
}

/**
 * The verdict of one open-loop run. A run with failed requests, or one whose
 * generator fell behind its schedule, cannot meet the goal: its percentiles
 * do not describe the load it was meant to apply.
 */
export function judge(
  run: { fraction: number; p99Ms: number; failures: number; keptSchedule: boolean },
  kind: LatencyGoalKind,
  fsyncP99Ms: number | undefined,
): GoalVerdict | undefined {
  const limit = limitFor(run.fraction, kind, fsyncP99Ms)
  if (limit === undefined) return undefined
  const met = run.p99Ms < limit.limitMs && run.failures === 0 && run.keptSchedule
  return { fraction: run.fraction, p99Ms: run.p99Ms, ...limit, met }
}

/** "met" / "missed", with why when it is not just the p99. */
export function verdictText(v: GoalVerdict, run: { failures: number; keptSchedule: boolean }): string {
  const limit = `< ${v.limitMs.toFixed(v.basis === 'fsync' ? 2 : 0)} ms${v.basis === 'fsync' ? ' (fsync p99 + 2)' : ''}`
  const why: string[] = []
  if (run.failures > 0) why.push('failed requests')
  if (!run.keptSchedule) why.push('generator behind')
  return `${limit}: ${v.met ? 'met' : 'missed'}${why.length > 0 ? ` (${why.join(', ')})` : ''}`
}
