// Reads a request body with a size limit. uWebSockets.js neuters each chunk's
// ArrayBuffer when the callback returns, so chunks are copied.
//
// A body over the limit is answered 413 only once the client has finished
// sending it (the rest is read and dropped): closing a socket with unread
// data makes the kernel send a TCP reset, which destroys the 413 before most
// clients read it. The drain is bounded: past DRAIN_LIMIT more bytes (or a
// declared length that far over), the 413 goes out at once and the
// connection closes, reset or not.
import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../errors'

/** How many bytes past the limit a client may still send so that it reads the 413 cleanly. */
export const DRAIN_LIMIT = 16 * 1024 * 1024

export function readBody(
  res: HttpResponse,
  maxBody: number,
  contentLength: string,
  done: (body: Buffer) => void,
  fail: (err: ApiError) => void,
): void {
  const tooLarge = () => new ApiError('payload_too_large', `the request body is larger than ${maxBody} bytes`)
  const declared = contentLength === '' ? undefined : Number(contentLength)
  if (declared !== undefined && declared > maxBody + DRAIN_LIMIT) {
    fail(tooLarge())
    return
  }
  const chunks: Buffer[] = []
  let size = 0
  let draining = declared !== undefined && declared > maxBody
  let failed = false
  res.onData((chunk, isLast) => {
    if (failed) return
    size += chunk.byteLength
    if (!draining && size > maxBody) {
      draining = true
      chunks.length = 0
    }
    if (draining) {
      if (isLast || size > maxBody + DRAIN_LIMIT) {
        failed = true
        fail(tooLarge())
      }
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
