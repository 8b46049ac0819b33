// Streams a shard scan to the client as it is produced: one JSON array, or
// one item per line for `Accept: application/x-ndjson`. The actor renders
// each slice as the text to write (workers/actor/stream-body.ts), so this
// thread only writes it. The actor keeps at most a small window of slices
// in flight; a slice opens the window again only once written and the socket
// has drained (`onWritable`), so a stalled reader holds at most that window
// in both threads whatever the size. An answer that comes whole (a kept
// neighbourhood) is handed to uWebSockets.js only as fast as the socket
// takes it (`tryEnd`), so it is never copied per reader. What the open
// streams hold in all is bounded too (StreamBuffers).
import { ApiError } from '../core/errors'
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

/** A whole answer up to this long is sent as any other answer (a slice's size); a longer one as the socket takes it. */
const WHOLE_COPIED_UP_TO = 64 * 1024

export function replyError(reply: ActorReply & { kind: 'error' }): ApiError {
  return new ApiError(reply.type, reply.message, reply.retryAfter === undefined ? undefined : { headers: { 'retry-after': String(reply.retryAfter) } })
}

/**
 * The bytes the open streams hold: handed to a stream and not yet taken by
 * its socket (slices written while it had back-pressure, the rest of an
 * answer written whole; an answer several streams write, a kept one, counts
 * once). Past the limit (--max-stream-buffer-mb) a new stream is refused
 * with 503 until readers read or go away.
 */
export class StreamBuffers {
  private held = 0
  /** Answers being written whole, by how many streams. */
  private readonly whole = new Map<Uint8Array, number>()

  constructor(private readonly limitBytes: number) {}

  /** Throws the 503 while the streams hold the limit or more. */
  admit(): void {
    if (this.held < this.limitBytes) return
    throw new ApiError('service_unavailable', `streamed answers waiting for slow readers hold ${mb(this.held)} MB, the limit is ${mb(this.limitBytes)} MB (MAX_STREAM_BUFFER_MB); retry later`)
  }

  add(bytes: number): void {
    this.held += bytes
  }

  holdWhole(body: Uint8Array): void {
    const streams = this.whole.get(body) ?? 0
    if (streams === 0) this.held += body.length
    this.whole.set(body, streams + 1)
  }

  releaseWhole(body: Uint8Array): void {
    const streams = this.whole.get(body)
    if (streams === undefined) return
    if (streams > 1) this.whole.set(body, streams - 1)
    else {
      this.whole.delete(body)
      this.held -= body.length
    }
  }
}

const mb = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(1)

const byteLength = (body: string | Uint8Array): number => (typeof body === 'string' ? Buffer.byteLength(body) : body.length)

/** `open` starts the scan with the same `format`: the actor renders the bytes in it. */
export function streamScan(ex: Exchange, format: StreamFormat, buffers: StreamBuffers, open: (onReply: (r: ActorReply) => void) => ScanHandle): void {
  buffers.admit()
  let started = false
  /** slices written whose `more` waits for the socket to drain */
  let owed = 0
  /** bytes written since the socket last took everything (what uWebSockets.js may still buffer) */
  let held = 0
  /** an answer being written whole, counted in `buffers` until sent */
  let whole: Uint8Array | undefined
  const release = (): void => {
    buffers.add(-held)
    held = 0
    if (whole !== undefined) buffers.releaseWhole(whole)
    whole = undefined
  }
  const handle = open(Object.assign((reply: ActorReply): void => {
    if (!ex.open) return
    if (reply.kind === 'error') {
      release()
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
      // The whole answer in one message: a plain response with Content-Length.
      if (reply.body.length <= WHOLE_COPIED_UP_TO) ex.send(200, CONTENT_TYPE[format], reply.body)
      else {
        const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body
        if (!sendWhole(ex, CONTENT_TYPE[format], body, release)) {
          whole = body
          buffers.holdWhole(body)
        }
      }
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
    // A write that succeeded sent what was buffered before it too.
    if (ok || reply.done) release()
    else {
      const bytes = byteLength(reply.body)
      held += bytes
      buffers.add(bytes)
    }
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
  ex.onAbort = () => {
    release()
    handle.cancel()
  }
}

/**
 * Writes a whole answer, with its Content-Length, as the socket takes it:
 * uWebSockets.js is handed only what the socket takes now (`tryEnd`), the
 * rest again from the write offset once it is writable, so the body (shared
 * when kept) is never copied for a reader who does not read. Returns whether
 * it is all sent; if not, `sent` is called once it is.
 */
function sendWhole(ex: Exchange, contentType: string, body: Uint8Array, sent: () => void): boolean {
  const total = body.length
  let from = 0
  let done = false
  ex.res.cork(() => {
    ex.res.writeStatus('200 OK').writeHeader('content-type', contentType).writeHeader('x-request-id', ex.requestId)
    ex.writeLateHeaders()
    from = ex.res.getWriteOffset()
    done = ex.res.tryEnd(body, total)[1]
  })
  if (done) {
    ex.finished = true
    return true
  }
  ex.res.onWritable((offset) => {
    const [ok, responded] = ex.res.tryEnd(body.subarray(offset - from), total)
    if (responded) {
      ex.finished = true
      sent()
    }
    return ok
  })
  return false
}
