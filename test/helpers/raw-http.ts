// Raw HTTP over a TCP socket, for what an HTTP client library would not send
// (malformed heads, pipelining) or would hide (a reset after a 413).
import { connect } from 'node:net'

export interface RawResult {
  /** everything the server sent, as latin1 text */
  text: string
  /** the socket error (ECONNRESET, EPIPE, ...), if any */
  error: string | undefined
  /** whether the server closed the connection before `waitMs` */
  closed: boolean
}

/**
 * Connects, writes `chunks` one after the other (`gapMs` apart, so that the
 * server reads them separately), and collects what comes back until the
 * server closes the connection or `waitMs` passes.
 */
export function rawExchange(url: string, chunks: (string | Buffer)[], waitMs: number, gapMs = 0): Promise<RawResult> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const received: Buffer[] = []
    let error: string | undefined
    let settled = false
    const socket = connect(Number(port), hostname)
    const finish = (closed: boolean): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ text: Buffer.concat(received).toString('latin1'), error, closed })
    }
    const timer = setTimeout(() => finish(false), waitMs)
    socket.on('connect', () => {
      if (gapMs === 0) for (const c of chunks) socket.write(c)
      else chunks.forEach((c, i) => setTimeout(() => { if (!socket.destroyed) socket.write(c) }, i * gapMs))
    })
    socket.on('data', (d: Buffer) => received.push(d))
    socket.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? err.message })
    socket.on('close', () => finish(true))
  })
}

/** The status codes of the answers in `text`, in order. */
export function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))
}
