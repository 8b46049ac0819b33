// src/http/body-intake.ts against a stand-in for uWebSockets.js's response:
// a body held until its reader comes (the socket paused, the chunks kept),
// handed over in order with the socket resumed first, and a dropped body
// that resumes the socket and touches the response no more.
import t from 'tap'
import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import { BodyIntake } from '../../../src/http/body-intake'
import { Exchange } from '../../../src/http/exchange'

function fakeResponse() {
  const calls: string[] = []
  let onData: ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined
  const res = {
    onAborted: () => res,
    onData: (cb: typeof onData) => { onData = cb; return res },
    pause: () => { calls.push('pause') },
    resume: () => { calls.push('resume') },
  }
  const req = { getMethod: () => 'post', getUrl: () => '/graph/v1/t/bulk', getQuery: () => '', forEach: () => undefined }
  const ex = new Exchange(res as unknown as HttpResponse, req as unknown as HttpRequest, 'http://x')
  const push = (text: string, isLast = false): void => {
    const bytes = Buffer.from(text)
    onData!(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer, isLast)
  }
  return { ex, calls, push }
}

t.test('held chunks are kept with the socket paused, then handed over in order after a resume', async (t) => {
  const { ex, calls, push } = fakeResponse()
  const intake = new BodyIntake(ex)
  push('a')
  push('b')
  t.same(calls, ['pause'], 'paused once, at the first chunk')
  const got: string[] = []
  intake.read((chunk, isLast) => {
    calls.push(`read ${chunk.toString()}${isLast ? ' last' : ''}`)
    got.push(chunk.toString())
  })
  t.same(calls, ['pause', 'resume', 'read a', 'read b'], 'resumed before the kept chunks, so the reader may pause again')
  push('c', true)
  t.same(got, ['a', 'b', 'c'])
  t.equal(calls.at(-1), 'read c last')
})

t.test('a body that ended while held is handed over with its end, without a pause', async (t) => {
  const { ex, calls, push } = fakeResponse()
  const intake = new BodyIntake(ex)
  push('all of it', true)
  const got: [string, boolean][] = []
  intake.read((chunk, isLast) => got.push([chunk.toString(), isLast]))
  t.same(got, [['all of it', true]])
  t.same(calls, [])
})

t.test('a dropped body resumes the socket and the rest is not handed on', async (t) => {
  const { ex, calls, push } = fakeResponse()
  const intake = new BodyIntake(ex)
  push('a')
  intake.drop()
  t.same(calls, ['pause', 'resume'])
  push('b')
  push('c', true)
  t.same(calls, ['pause', 'resume'], 'the response is not touched once dropped')
  t.throws(() => intake.read(() => undefined), 'a dropped body cannot be read')
})

t.test('dropping a body its reader has is left to the reader', async (t) => {
  const { ex, calls, push } = fakeResponse()
  const intake = new BodyIntake(ex)
  const got: string[] = []
  intake.read((chunk) => got.push(chunk.toString()))
  intake.drop()
  push('a')
  t.same(got, ['a'])
  t.same(calls, [])
})
