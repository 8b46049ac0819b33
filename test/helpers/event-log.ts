// The event envelope (docs/design/contracts.md, Events) and a reader of a tenant's log
// through the cursor read, for the tests of the deliveries that must serve
// the same envelopes.
import type { Graph } from './client'

export interface Envelope {
  id: string
  sequence: number
  tenant: string
  operation: string
  schema: string
  payload: Record<string, unknown>
  time: number
}

/** The envelopes (as JSON text) after `after` up to the end of the log, at most `max`, and the last sequence read. */
export async function readLog(g: Graph, after = 0, max = Number.POSITIVE_INFINITY): Promise<{ texts: string[]; end: number }> {
  const texts: string[] = []
  let cursor = after
  while (texts.length < max) {
    const res = await g.get(`events?after=${cursor}&limit=${Math.min(1000, max - texts.length)}`)
    if (res.status !== 200) throw new Error(`events read: ${res.status} ${res.text}`)
    const page = res.json<{ events: unknown[]; next: number }>()
    if (page.events.length === 0) break
    texts.push(...page.events.map((e) => JSON.stringify(e)))
    cursor = page.next
  }
  return { texts, end: cursor }
}

/** The last sequence of the tenant's log. */
export const logEnd = async (g: Graph): Promise<number> => (await readLog(g)).end
