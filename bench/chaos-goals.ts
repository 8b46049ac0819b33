// The chaos bench's goals for a host's rejoin (kill-owner, wipe-host,
// kill-auth-owner bring their victim back): from its return on, the load gets
// no 503 (an owner hands a shard back only to a host that has caught up with
// its stream), and placement settles within two lease periods, plus a margin
// for the machine.
import type { Statuses } from './chaos-load'

/** Over the two lease periods of the goal: timing on a machine running three NATS servers, three hosts and the load. */
export const SETTLE_MARGIN_MS = 2000

export const settleGoalMs = (leaseMs: number): number => 2 * leaseMs + SETTLE_MARGIN_MS

/** What a run of a rejoining scenario missed of its goals (empty: none). */
export function rejoinMissed(run: { settledMs: number | undefined; others: Record<string, Statuses> }, leaseMs: number): string[] {
  const missed: string[] = []
  const after = run.others['restore']?.['503'] ?? 0
  if (after > 0) missed.push(`${after} 503s after the victim's return`)
  if (run.settledMs === undefined || run.settledMs > settleGoalMs(leaseMs)) missed.push(`placement settled ${run.settledMs === undefined ? 'never' : `${run.settledMs} ms`} after the return (goal ${settleGoalMs(leaseMs)} ms)`)
  return missed
}
