// Streams a shard scan to the client as it is produced: one JSON array, or
// one item per line for `Accept: application/x-ndjson`. The actor renders
// each slice as the text to write (workers/actor/stream-body.ts), so this
// thread only writes it. The actor keeps at most a small window of slices
// in flight; a slice opens the window again only once written and the socket
// has drained (`onWritable`), so memory stays bounded in both threads
// whatever the size.
import { ApiError } from '../errors'
import type { ActorReply, StreamFormat } from '../contract/messages'
import type { Exchange } from './exchange'

export type { StreamFormat } from '../contract/messages'

/** The running scan (the actor pool's StreamHandle): ask for the next slice, or stop. */
export interface ScanHandle {
  more(): void
  cancel(): void
}

export function streamFormat(accept: string): StreamFormat {
  return accept.includes('application/x-ndjson') ? 'ndjson' : 'json'
}

const CONTENT_TYPE: Record<StreamFormat, string> = { json: 'application/json', ndjson: 'application/x-ndjson' }

export function replyError(reply: ActorReply & { kind: 'error' }): ApiError {
  return new ApiError(reply.type, reply.message, reply.retryAfter === undefined ? undefined : { headers: { 'retry-after': String(reply.retryAfter) } })
}

/** `open` starts the scan with the same `format`: the actor renders the bytes in it. */
export function streamScan(ex: Exchange, format: StreamFormat, open: (onReply: (r: ActorReply) => void) => ScanHandle): void {
  let started = false
  /** slices written whose `more` waits for the socket to drain */
  let owed = 0
  const handle = open(Object.assign((reply: ActorReply): void => {
    if (!ex.open) return
    if (reply.kind === 'error') {
      if (!started) ex.error(replyError(reply))
      else {
        // Headers are out: cut the connection so the client cannot take a truncated body for a whole one.
        ex.finished = true
        ex.res.close()
      }
      return
    }
    if (reply.kind !== 'chunks') return
    if (!started && reply.done) {
      // The whole answer fits one slice: a plain response with Content-Length.
      ex.send(200, CONTENT_TYPE[format], reply.body)
      return
    }
    let ok = true
    ex.res.cork(() => {
      if (!started) {
        started = true
        ex.res.writeStatus('200 OK').writeHeader('content-type', CONTENT_TYPE[format]).writeHeader('x-request-id', ex.requestId)
        ex.writeLateHeaders()
      }
      if (reply.done) {
        ex.finished = true
        ex.res.end(reply.body)
      } else if (reply.body.length > 0) ok = ex.res.write(reply.body)
    })
    if (reply.done) return
    // Each slice written opens the actor's window by one, once the socket has
    // drained; several slices may arrive before it has (workers/actor/streams.ts).
    owed++
    if (ok) pay()
    else {
      ex.res.onWritable(() => {
        pay()
        return true
      })
    }
  }, { requestId: () => ex.requestId }))
  function pay(): void {
    for (; owed > 0; owed--) handle.more()
  }
  ex.onAbort = () => handle.cancel()
}
