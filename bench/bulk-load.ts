// The bulk load: one streamed POST /graph/v1/{tenant}/bulk per tenant, each
// fed lines (the scenario's single requests, written as bulk lines) as fast
// as the server takes them, its answers read as they stream back. A line's
// latency is from when its bytes were handed to the request body to its
// answer (answers come in order). Only lines answered inside the window
// count; at its end the bodies end and the rest is drained.
import { Readable } from 'node:stream'
import { request } from 'undici'
import { Histogram } from './histogram'
import { count, drain, loadResult, measuredWindow, newTally, type BenchRequest, type LoadResult, type WindowOptions } from './load'

export interface BulkLoadOptions extends Omit<WindowOptions, 'next'> {
  /** The tenants, one bulk request each, and each one's line source (its requests are all of that tenant). */
  streams: readonly { tenant: string; authorization: string; next: () => BenchRequest }[]
}

/** Lines handed to a body per read of the stream (a read asks for at most ~64 KiB). */
const LINES_PER_READ = 256
/** At most this many lines of one request handed over and not answered (the server's own window is 512). */
const AHEAD = 4096
/** Headers a line carries: what a write reads besides the token. */
const LINE_HEADERS = ['consent-reference']

/** The request as a bulk line: its path under the tenant, its write headers and body. */
export function bulkLine(r: BenchRequest, prefix: string): string {
  const headers: Record<string, string> = {}
  for (const name of LINE_HEADERS) if (r.headers[name] !== undefined) headers[name] = r.headers[name]
  const path = r.path.startsWith(prefix) ? r.path.slice(prefix.length) : r.path
  // The pre-built bodies are JSON text already: spliced in, not parsed and written again.
  return `{"method":"${r.method}","path":${JSON.stringify(path)},"headers":${JSON.stringify(headers)}${r.body === undefined ? '' : `,"body":${r.body}`}}\n`
}

export async function runBulkLoad(o: BulkLoadOptions): Promise<LoadResult> {
  const hist = new Histogram()
  const tally = newTally()
  let measuring = false
  let stopped = false
  let completed = 0
  let ok = 0
  let bytesIn = 0
  let open = 0

  const stream = async (s: BulkLoadOptions['streams'][number]): Promise<void> => {
    const prefix = `/graph/v1/${encodeURIComponent(s.tenant)}/`
    // Send times of the lines not answered yet, in order.
    const sentAt: number[] = []
    let head = 0
    // Lines handed over and not answered yet stay under AHEAD, so a line's latency is the server's, not a queue's in the generator.
    let waiting = false
    const more = (readable: Readable): void => {
      if (stopped) {
        readable.push(null)
        return
      }
      if (sentAt.length - head >= AHEAD) {
        waiting = true
        return
      }
      let text = ''
      const now = performance.now()
      for (let i = 0; i < LINES_PER_READ; i++) {
        text += bulkLine(s.next(), prefix)
        sentAt.push(now)
      }
      readable.push(text)
    }
    const body = new Readable({ read() { more(this) } })
    open++
    try {
      const res = await request(`${o.origin}${prefix}bulk`, {
        method: 'POST', headers: { authorization: s.authorization, 'content-type': 'application/x-ndjson' }, body,
        headersTimeout: o.timeoutMs ?? 60_000, bodyTimeout: o.timeoutMs ?? 60_000,
      })
      let rest = ''
      for await (const chunk of res.body) {
        const text = rest + (chunk as Buffer).toString()
        const lines = text.split('\n')
        rest = lines.pop()!
        if (measuring) bytesIn += (chunk as Buffer).length
        for (const line of lines) {
          const status = Number(/^\{"status":(\d+)/.exec(line)?.[1] ?? 0)
          const at = sentAt[head++]!
          if (head > 65_536) {
            sentAt.splice(0, head)
            head = 0
          }
          if (waiting && sentAt.length - head < AHEAD / 2) {
            waiting = false
            more(body)
          }
          if (!measuring) continue
          completed++
          if (status >= 200 && status < 300) ok++
          count(tally, { startMs: at, status, bytes: line.length, body: line, error: undefined }, 'BULK', prefix)
          hist.record((performance.now() - at) * 1000)
        }
      }
    } catch (err) {
      if (measuring) count(tally, { startMs: 0, status: 0, bytes: 0, body: undefined, error: err as Error }, 'BULK', prefix)
    } finally {
      open--
    }
  }

  const all = Promise.all(o.streams.map(stream))
  const { windowMs, cpu } = await measuredWindow(o, (on) => {
    measuring = on
    stopped = !on
  })
  const unfinished = await drain(() => open, o.graceMs ?? 30_000)
  if (unfinished === 0) await all
  return loadResult({ connections: o.streams.length, pipelining: 1 }, windowMs, { completed, ok, bytesIn, unfinished }, hist, tally, cpu)
}
