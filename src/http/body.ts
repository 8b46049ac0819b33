// Reads a request body with a size limit. uWebSockets.js neuters each chunk's
// ArrayBuffer when the callback returns, so chunks are copied.
//
// A body over the limit is answered 413 only once the client has finished
// sending it (the rest is read and dropped): closing a socket with unread
// data makes the kernel send a TCP reset, which destroys the 413 before most
// clients read it. The drain is bounded in time, not in size, as nginx's
// lingering close is: a client at loopback or LAN speed finishes any size
// within LINGER.totalMs and reads its 413; one that is still sending then,
// or pauses for LINGER.idleMs, gets the 413 at once and the connection
// closes, reset or not.
import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../core/errors'

/** How long the rest of a body over the limit is read and dropped: in all, and without data (nginx's lingering_time and lingering_timeout). */
export interface Linger {
  totalMs: number
  idleMs: number
}

/** The 413 of a body (or a bulk line's body) over the limit. */
export const bodyTooLarge = (maxBody: number): ApiError => new ApiError('payload_too_large', `the request body is larger than ${maxBody} bytes`)

export const LINGER: Linger = { totalMs: 30_000, idleMs: 5_000 }

export function readBody(
  res: HttpResponse,
  maxBody: number,
  contentLength: string,
  done: (body: Buffer) => void,
  fail: (err: ApiError) => void,
  linger: Linger = LINGER,
): void {
  const chunks: Buffer[] = []
  let size = 0
  let failed = false
  /** Set while a body over the limit is being dropped. */
  let timer: NodeJS.Timeout | undefined
  let lastData = 0
  let giveUpAt = 0

  const tooLarge = (): void => {
    failed = true
    clearTimeout(timer)
    fail(bodyTooLarge(maxBody))
  }
  const check = (): void => {
    const now = performance.now()
    const next = Math.min(giveUpAt, lastData + linger.idleMs)
    if (now >= next) tooLarge()
    else timer = setTimeout(check, next - now).unref()
  }
  const startDropping = (): void => {
    chunks.length = 0
    lastData = performance.now()
    giveUpAt = lastData + linger.totalMs
    timer = setTimeout(check, Math.min(linger.idleMs, linger.totalMs)).unref()
  }

  if (contentLength !== '' && Number(contentLength) > maxBody) startDropping()
  res.onData((chunk, isLast) => {
    if (failed) return
    size += chunk.byteLength
    if (timer === undefined && size > maxBody) startDropping()
    if (timer !== undefined) {
      if (isLast) tooLarge()
      else lastData = performance.now()
      return
    }
    if (isLast) {
      if (chunks.length === 0) {
        done(Buffer.from(chunk.slice(0)))
      } else {
        chunks.push(Buffer.from(chunk.slice(0)))
        done(Buffer.concat(chunks, size))
      }
    } else {
      chunks.push(Buffer.from(chunk.slice(0)))
    }
  })
}
