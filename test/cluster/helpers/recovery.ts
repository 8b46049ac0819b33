// How long a fault keeps a shard from being served: the time until every
// given host answers a read of the tenant's shard with something other than
// a 503 (a 404 is an answer: the probe reads a node nobody wrote).
import type { Graph } from '../../helpers/client'
import { sleep } from '../../../bench/wait'

/** The recovery goal of the chaos scenarios: two lease periods and 2 s after the fault. */
export const recoveryLimitMs = (leaseMs: number): number => 2 * leaseMs + 2000

/** Milliseconds from `since` until every graph reads the tenant's shard (probing every 100 ms), or undefined after `limitMs` (and up to 30 s more, to say how long it took). */
export async function servedEverywhereAfter(graphs: readonly Graph[], since: number, limitMs: number): Promise<{ ms: number | undefined; within: boolean }> {
  const giveUp = since + limitMs + 30_000
  for (;;) {
    const statuses = await Promise.all(graphs.map((g) => g.get('nodes/core/customer/recovery-probe').then((r) => r.status, () => 0)))
    const ms = Date.now() - since
    if (statuses.every((s) => s === 200 || s === 404)) return { ms, within: ms <= limitMs }
    if (Date.now() > giveUp) return { ms: undefined, within: false }
    await sleep(100)
  }
}

/** What each host logged of the cluster (lines with "cluster:") since `since`, for a failed scenario's comments. */
export function clusterLines(hosts: readonly { nodeId: string; output(): string }[], since: number): string[] {
  const out: string[] = []
  for (const h of hosts) {
    for (const line of h.output().split('\n')) {
      const at = /"time":(\d+)/.exec(line)
      if (at !== null && Number(at[1]) >= since && /cluster:/.test(line)) out.push(`${h.nodeId} +${Number(at[1]) - since} ms: ${line.replace(/"err":"[^"]*"/, '').slice(0, 300)}`)
    }
  }
  return out
}
