// src/http/ndjson-stream.ts against a stand-in for uWebSockets.js's
// response: answers in the lines' order whatever order they arrive in (those
// of one turn in one write), one per line and nothing more, the intake
// paused while the window is full or the socket has not drained and resumed
// when both clear, answers=errors (the failed lines, then the summary), and
// a body with no JSON line refused as a whole.
import t from 'tap'
import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../../../src/core/errors'
import { Exchange } from '../../../src/http/exchange'
import type { LineAnswer } from '../../../src/http/line-exchange'
import { streamNdjson, type LineHandler, type NdjsonStreamOptions } from '../../../src/http/ndjson-stream'

/** The response as the stream uses it: what was written, pause and resume, and hooks to push body chunks and drain the socket. */
function fakeResponse() {
  const state = { written: '', writes: 0, status: '', ended: false, paused: false, pauses: 0, resumes: 0, writable: true }
  let onData: ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined
  let onWritable: ((offset: number) => boolean) | undefined
  const res = {
    onAborted: () => res,
    onData: (cb: typeof onData) => { onData = cb; return res },
    onWritable: (cb: typeof onWritable) => { onWritable = cb; return res },
    cork: (fn: () => void) => { fn(); return res },
    writeStatus: (s: string | Buffer) => { state.status = String(s); return res },
    writeHeader: () => res,
    write: (text: string) => { state.written += text; state.writes++; return state.writable },
    end: (text: string | Buffer) => { state.written += String(text); state.ended = true; return res },
    endWithoutBody: () => { state.ended = true; return res },
    pause: () => { state.paused = true; state.pauses++ },
    resume: () => { state.paused = false; state.resumes++ },
  }
  const req = { getMethod: () => 'post', getUrl: () => '/graph/v1/t/bulk', getQuery: () => '', forEach: () => undefined }
  const ex = new Exchange(res as unknown as HttpResponse, req as unknown as HttpRequest, 'http://x')
  const push = (text: string, isLast = false): void => {
    const bytes = Buffer.from(text)
    onData!(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer, isLast)
  }
  const drain = (): void => {
    state.writable = true
    onWritable?.(0)
  }
  return { ex, state, push, drain }
}

const options = (o: Partial<NdjsonStreamOptions> = {}): NdjsonStreamOptions => ({ window: 4, windowBytes: 1 << 20, maxLine: 1000, onlyFailures: false, ...o })
const lines = (n: number, from = 0): string => Array.from({ length: n }, (_, i) => `{"n":${from + i}}\n`).join('')
const answerLines = (written: string): string[] => written.split('\n').filter((l) => l !== '')
/** Answers that arrive later are written once the turn that brought them is over. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** A handler that keeps each line's answer function, to answer later in any order. */
function deferred(): { pending: ((a: LineAnswer) => void)[]; handle: LineHandler } {
  const pending: ((a: LineAnswer) => void)[] = []
  return { pending, handle: (_line, answer) => { pending.push(answer); return undefined } }
}

t.test('answers are written in the lines\' order, whenever each arrives, one per line and nothing more', async (t) => {
  const { ex, state, push } = fakeResponse()
  const { pending, handle } = deferred()
  streamNdjson(ex, options({ window: 10 }), handle)
  push(lines(3), true)
  t.equal(pending.length, 3, 'all three handed on without waiting')
  pending[2]!({ status: 204 })
  pending[1]!({ status: 400, error: '{"status":400}' })
  await settle()
  t.equal(state.written, '', 'nothing before the first line is answered')
  pending[0]!({ status: 201, body: '{"a":1}' })
  await settle()
  t.same(answerLines(state.written), ['{"status":201,"body":{"a":1}}', '{"status":400,"error":{"status":400}}', '{"status":204}'], 'no summary')
  t.ok(state.ended)
  t.equal(state.status, '200 OK')
})

t.test('an empty body: 200 and an empty answer; with answers=errors, the summary alone', async (t) => {
  for (const onlyFailures of [false, true]) {
    const { ex, state, push } = fakeResponse()
    streamNdjson(ex, options({ onlyFailures }), () => {
      t.fail('no line to handle')
      return undefined
    })
    push('', true)
    t.same([state.status, state.ended, state.written], ['200 OK', true, onlyFailures ? '{"done":0,"failed":0}\n' : ''], `onlyFailures ${onlyFailures}`)
  }
})

t.test('the intake pauses while the window is full and resumes once half of it is answered', async (t) => {
  const { ex, state, push } = fakeResponse()
  const { pending, handle } = deferred()
  streamNdjson(ex, options({ window: 4 }), handle)
  push(lines(10))
  t.equal(pending.length, 4, 'only a window of lines is handed on')
  t.ok(state.paused, 'and the socket is paused')
  pending[0]!({ status: 204 })
  await settle()
  t.equal(pending.length, 5, 'an answered line lets the next one in from what was received')
  t.ok(state.paused, 'the window is still full')
  const writes = state.writes
  for (let i = 1; i < 5; i++) pending[i]!({ status: 204 })
  await settle()
  t.equal(pending.length, 9)
  t.equal(state.writes, writes + 1, 'answers that arrive in one turn are written at once')
  for (let i = 5; i < 9; i++) pending[i]!({ status: 204 })
  await settle()
  t.equal(pending.length, 10, 'every received line handed on')
  t.notOk(state.paused, 'resumed: room in the window and nothing left to take')
  push('', true)
  pending[9]!({ status: 204 })
  await settle()
  t.ok(state.ended)
  t.equal(answerLines(state.written).length, 10)
})

t.test('a client that does not read stops the intake until the socket drains', async (t) => {
  const { ex, state, push, drain } = fakeResponse()
  streamNdjson(ex, options({ window: 100 }), (_line, answer) => {
    answer({ status: 204 })
    return undefined
  })
  state.writable = false
  push(lines(3))
  t.ok(state.paused, 'the answers could not be written: paused')
  const taken = answerLines(state.written).length
  push(lines(3, 3))
  t.equal(answerLines(state.written).length, taken, 'no line taken while blocked')
  drain()
  t.notOk(state.paused, 'drained: resumed')
  t.equal(answerLines(state.written).length, 6, 'the lines received meanwhile are taken then')
})

t.test('answers=errors: only the failed lines with their numbers, then the summary as the last line', async (t) => {
  const { state, ex, push } = fakeResponse()
  streamNdjson(ex, options({ onlyFailures: true }), (line, answer) => {
    answer(line.number === 4 ? { status: 400, error: '{}' } : { status: 204 })
    return undefined
  })
  push(`${lines(2)}\n${lines(2)}`, true)
  t.same(answerLines(state.written), ['{"line":4,"status":400,"error":{}}', '{"done":4,"failed":1}'], 'the blank third line is counted, not answered')
})

t.test('a body whose lines are no JSON is refused as a whole; once a line is, such lines only fail themselves', async (t) => {
  const notJson = new ApiError('bad_request', 'the line is not valid JSON')
  const isJson = (bytes: Buffer): boolean => bytes.toString().startsWith('{')

  const refused = fakeResponse()
  let handedOn = 0
  streamNdjson(refused.ex, options({ window: 100 }), (line, answer) => {
    if (line.kind === 'line' && !isJson(line.bytes)) return notJson
    handedOn++
    answer({ status: 204 })
    return undefined
  })
  refused.push('hello\nworld\n', true)
  t.equal(refused.state.status, '400 Bad Request', 'a short body with no JSON line')
  t.match(refused.state.written, /not NDJSON \(one JSON object per line\): line 1: the line is not valid JSON/)

  const long = fakeResponse()
  streamNdjson(long.ex, options({ window: 100 }), () => notJson)
  long.push('x\n'.repeat(100))
  t.equal(long.state.status, '400 Bad Request', 'a long one is refused before it ends')
  t.ok(long.state.ended)

  const wide = fakeResponse()
  streamNdjson(wide.ex, options({ window: 100, windowBytes: 64 }), () => notJson)
  wide.push(`${'x'.repeat(40)}\n`.repeat(3))
  t.equal(wide.state.status, '400 Bad Request', 'so is one whose lines fill the window first: held, they would never be answered')

  const malformedFirst = fakeResponse()
  streamNdjson(malformedFirst.ex, options({ window: 100 }), (line, answer) => {
    if (line.kind === 'line' && !isJson(line.bytes)) return notJson
    handedOn++
    answer({ status: 204 })
    return undefined
  })
  malformedFirst.push(`oops\n\nnot json either\n${lines(2)}oops again\n`, true)
  await settle()
  t.equal(malformedFirst.state.status, '200 OK', 'malformed first lines before a JSON one: the body is NDJSON')
  const answers = answerLines(malformedFirst.state.written)
  t.equal(answers.length, 5, 'one answer per line, the blank one aside')
  t.match(answers[0], /^\{"status":400,"error":\{.*the line is not valid JSON/)
  t.match(answers[1], /^\{"status":400,/)
  t.same(answers.slice(2, 4), ['{"status":204}', '{"status":204}'])
  t.match(answers[4], /^\{"status":400,/)
  t.equal(handedOn, 2, 'only the JSON lines were handed on')

  const errorsOnly = fakeResponse()
  streamNdjson(errorsOnly.ex, options({ window: 100, onlyFailures: true }), (line, answer) => {
    if (line.kind === 'line' && !isJson(line.bytes)) return notJson
    answer({ status: 204 })
    return undefined
  })
  errorsOnly.push(`oops\n${lines(1)}`, true)
  await settle()
  const numbered = answerLines(errorsOnly.state.written)
  t.match(numbered[0], /^\{"line":1,"status":400,/)
  t.equal(numbered[1], '{"done":2,"failed":1}')
})
