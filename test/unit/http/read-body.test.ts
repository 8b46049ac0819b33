// src/http/body.ts: a body over the limit is read and dropped until it ends
// (then 413), however large, within a bounded time: in all and without data.
import t from 'tap'
import type { HttpResponse } from 'uWebSockets.js'
import type { ApiError } from '../../../src/core/errors'
import { readBody, type Linger } from '../../../src/http/body'
import { until } from '../../../bench/wait'

const LIMIT = 1024
/** Short bounds so that the cut-offs are seen in well under a second; margins of hundreds of ms. */
const SHORT: Linger = { totalMs: 600, idleMs: 300 }

/** A body being received: chunks are pushed as uWebSockets.js would hand them. */
function receive(contentLength: string, linger: Linger = SHORT) {
  let onData: ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined
  const res = { onData: (cb: typeof onData) => { onData = cb; return res } } as unknown as HttpResponse
  const outcome: { body?: Buffer; error?: ApiError; at?: number } = {}
  const started = performance.now()
  readBody(res, LIMIT, contentLength, (body) => { outcome.body = body }, (error) => {
    outcome.error = error
    outcome.at = performance.now() - started
  }, linger)
  const push = (bytes: number, isLast: boolean): void => onData!(new ArrayBuffer(bytes), isLast)
  return { outcome, push }
}

t.test('a body within the limit is handed over whole', async (t) => {
  const { outcome, push } = receive('1000')
  push(600, false)
  push(400, true)
  t.equal(outcome.body?.length, 1000)
  t.equal(outcome.error, undefined)
})

t.test('a body far over the limit is dropped to its end, then 413 (no size bound)', async (t) => {
  const chunk = 512 * 1024
  const total = 100 * 1024 * 1024 // 100 MiB to a 1 KiB limit
  const { outcome, push } = receive(String(total))
  for (let sent = chunk; sent < total; sent += chunk) {
    push(chunk, false)
    if (outcome.error !== undefined) break
  }
  t.equal(outcome.error, undefined, 'no answer while the client is still sending')
  push(chunk, true)
  t.equal(outcome.error?.status, 413)
  t.equal(outcome.body, undefined)
})

t.test('streamed without a length: over the limit, dropped to the end', async (t) => {
  const { outcome, push } = receive('')
  for (let i = 0; i < 40; i++) push(512, false)
  t.equal(outcome.error, undefined)
  push(10, true)
  t.equal(outcome.error?.status, 413)
})

t.test('a sender that pauses past idleMs gets its 413 then', async (t) => {
  const { outcome, push } = receive(String(10 * LIMIT))
  push(2 * LIMIT, false)
  await until('the 413', () => outcome.error !== undefined, 5_000)
  t.equal(outcome.error?.status, 413)
  t.ok(outcome.at! >= SHORT.idleMs - 20 && outcome.at! < SHORT.totalMs, `after the idle time (${Math.round(outcome.at!)} ms)`)
})

t.test('an endless sender is cut off after totalMs', async (t) => {
  const { outcome, push } = receive('')
  const feeder = setInterval(() => push(LIMIT, false), 20)
  t.teardown(() => clearInterval(feeder))
  await until('the 413', () => outcome.error !== undefined, 5_000)
  clearInterval(feeder)
  t.equal(outcome.error?.status, 413)
  t.ok(outcome.at! >= SHORT.totalMs - 20, `after the total time (${Math.round(outcome.at!)} ms)`)
  push(LIMIT, true)
  t.equal(outcome.error?.status, 413, 'answered once')
})
