// Reads a request body with a size limit. uWebSockets.js neuters each chunk's
// ArrayBuffer when the callback returns, so chunks are copied.
import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../errors'

export function readBody(
  res: HttpResponse,
  maxBody: number,
  contentLength: string,
  done: (body: Buffer) => void,
  fail: (err: ApiError) => void,
): void {
  const tooLarge = () => new ApiError('payload_too_large', `the request body is larger than ${maxBody} bytes`)
  if (contentLength !== '' && Number(contentLength) > maxBody) {
    fail(tooLarge())
    return
  }
  const chunks: Buffer[] = []
  let size = 0
  let failed = false
  res.onData((chunk, isLast) => {
    if (failed) return
    size += chunk.byteLength
    if (size > maxBody) {
      failed = true
      fail(tooLarge())
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
