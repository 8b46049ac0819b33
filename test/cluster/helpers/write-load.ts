// A write load for the failover scenarios: clients writing nodes in a loop
// through given hosts, recording every acknowledged (204) write and when each
// answer came, until stopped.
import type { Graph } from '../../helpers/client'
import { sleep } from '../../../bench/wait'

export interface WriteLoad {
  /** Ids whose write was acknowledged. */
  acknowledged: string[]
  /** Date.now() of every acknowledged write, in order. */
  acknowledgedAt: number[]
  /** Statuses other than 204, counted. */
  others: Map<number, number>
  /** The first few answers other than 204: when (ms since the load started), status and body. */
  samples: string[]
  stop(): Promise<void>
}

export function startWriteLoad(graphs: readonly Graph[], clients: number, prefix: string): WriteLoad {
  const load: WriteLoad = { acknowledged: [], acknowledgedAt: [], others: new Map(), samples: [], stop: async () => undefined }
  const started = Date.now()
  let running = true
  const workers = Array.from({ length: clients }, async (_, c) => {
    const g = graphs[c % graphs.length]!
    for (let i = 0; running; i++) {
      const id = `${prefix}-${c}-${i}`
      try {
        const res = await g.put(`nodes/core/customer/${id}`, { c, i })
        if (res.status === 204) {
          load.acknowledged.push(id)
          load.acknowledgedAt.push(Date.now())
        } else {
          load.others.set(res.status, (load.others.get(res.status) ?? 0) + 1)
          if (load.samples.length < 10) load.samples.push(`+${Date.now() - started} ms ${res.status} ${res.text.slice(0, 200)}`)
          await sleep(50)
        }
      } catch {
        load.others.set(0, (load.others.get(0) ?? 0) + 1)
        await sleep(50)
      }
    }
  })
  load.stop = async () => {
    running = false
    await Promise.all(workers)
  }
  return load
}

/** Every event sequence of tenant demo through `g`, in order (pages of 1000; a 503 between owners asked again, up to 10 s). */
export async function allSequences(g: Graph): Promise<number[]> {
  const out: number[] = []
  let after = 0
  for (;;) {
    let res = await g.get(`events?after=${after}&limit=1000`)
    for (let tries = 0; res.status === 503 && tries < 100; tries++) {
      await sleep(100)
      res = await g.get(`events?after=${after}&limit=1000`)
    }
    if (res.status !== 200) throw new Error(`reading events after ${after}: ${res.status}`)
    const page = res.json<{ events: { sequence: number }[]; next: number }>()
    for (const e of page.events) out.push(e.sequence)
    if (page.events.length < 1000) return out
    after = page.next
  }
}

/** The gaps of an ascending sequence list: each missing number. */
export function gaps(sequences: readonly number[]): number[] {
  const missing: number[] = []
  for (let i = 1; i < sequences.length; i++) for (let s = sequences[i - 1]! + 1; s < sequences[i]!; s++) missing.push(s)
  return missing
}

/**
 * The status of reading node `id` through `g`, asking again while the answer
 * is a 503 (a shard between owners says so, with Retry-After), for at most
 * `patienceMs`.
 */
export async function readBack(g: Graph, id: string, patienceMs = 10_000): Promise<number> {
  const until = Date.now() + patienceMs
  for (;;) {
    const res = await g.get(`nodes/core/customer/${id}`)
    if (res.status !== 503 || Date.now() > until) return res.status
    await sleep(100)
  }
}
