// A streamed NDJSON exchange: the body is split into lines as it arrives,
// each line is handed on without waiting for the ones before it to be
// answered (so many land in one group commit), and the answers are written
// back in the lines' order. By default that is one answer per line and
// nothing else, so a client matches answers to lines by counting them; with
// `onlyFailures`, the failed lines with their numbers and a last
// `{"done":n,"failed":m}` (else the client could not tell how many lines
// were taken). Memory is bounded both ways: while `window` lines (or
// `windowBytes` of them) wait for their answers, or while the client does
// not read what was written, the body's intake is paused (uWebSockets.js
// stops reading the socket); it resumes when both clear.
// No line is taken before the route runs, so none before the token's
// verdict (src/app/dispatch.ts holds the body until then).
import { ApiError } from '../core/errors'
import { BodyIntake } from './body-intake'
import type { Exchange } from './exchange'
import { isDraining, onDrain } from './in-flight'
import { lineError, type LineAnswer } from './line-exchange'
import { NdjsonLines, type SplitLine } from './ndjson-lines'

export interface NdjsonStreamOptions {
  /** At most this many lines handed on and not yet answered. */
  window: number
  /** At most this many bytes of such lines (at least one line is always let through). */
  windowBytes: number
  /** A longer line is dropped unread and answered by `handle` as oversized. */
  maxLine: number
  /** Write only the failed lines (with their numbers) and a last `{"done":n,"failed":m}`: for a client that reads nothing before it has sent everything. Otherwise every line's answer and nothing more. */
  onlyFailures: boolean
}

/**
 * Handles one line: calls `answer` once, now or later, or returns an error
 * instead when the line is no JSON value at all. Such an error is that line's
 * answer, unless no line of the body is JSON: then the request is refused as
 * a whole (nothing was applied, nothing written).
 */
export type LineHandler = (line: SplitLine, answer: (a: LineAnswer) => void) => ApiError | undefined

/**
 * Lines that are no JSON at all before any line that is: past this many (or
 * once they fill the window) the body is taken for something other than
 * NDJSON (a JSON document spread over lines, a form, binary) and refused,
 * without reading the rest. Fewer would
 * refuse a request whose first lines are merely malformed, whose later lines
 * must still be applied.
 */
const NOT_JSON_BEFORE_REFUSAL = 16

const NDJSON = Buffer.from('application/x-ndjson')

interface Slot {
  number: number
  bytes: number
  answer: LineAnswer | undefined
}

function answerText(a: LineAnswer, number: number | undefined): string {
  const line = number === undefined ? '' : `"line":${number},`
  if (a.error !== undefined) return `{${line}"status":${a.status},"error":${a.error}}\n`
  if (a.body !== undefined) return `{${line}"status":${a.status},"body":${a.body}}\n`
  return `{${line}"status":${a.status}}\n`
}

export function streamNdjson(ex: Exchange, options: NdjsonStreamOptions, handle: LineHandler): void {
  const res = ex.res
  const lines = new NdjsonLines(options.maxLine)
  // Answered slots before `head` are cleared and cut off now and then, not shifted one by one.
  const queue: (Slot | undefined)[] = []
  let head = 0
  let bytesInFlight = 0
  let paused = false
  /** Waiting for the socket to drain what was written. */
  let blocked = false
  let started = false
  /** Until a line is JSON, the body may not be NDJSON at all: the answers of lines that are not are held. */
  let undecided = true
  let notJsonLines = 0
  let firstNotJson: { number: number; error: ApiError } | undefined
  /** No more lines are taken: the body ended, the client went away, or a shutdown began. */
  let stopped = false
  let over = false
  let done = 0
  let failed = 0

  const offDrain = onDrain(() => {
    stopped = true
    pump()
  })
  ex.onAbort = () => {
    over = true
    offDrain()
  }

  const inFlight = (): number => queue.length - head

  /** The status line and headers, before the first answer line. */
  const start = (): void => {
    if (started) return
    started = true
    res.writeStatus('200 OK').writeHeader('content-type', NDJSON).writeHeader('x-request-id', ex.requestId)
    ex.writeLateHeaders()
  }

  const write = (text: string): void => {
    let ok = true
    res.cork(() => {
      start()
      ok = res.write(text)
    })
    if (ok) return
    blocked = true
    res.onWritable(() => {
      blocked = false
      pump()
      return true
    })
  }

  const finish = (): void => {
    over = true
    offDrain()
    if (paused) res.resume()
    ex.status = 200
    res.cork(() => {
      // Also for an empty body: 200 and the content type, with no answer line.
      start()
      // Only answers=errors needs the counts: otherwise the answer lines are them.
      const summary = options.onlyFailures ? `{"done":${done},"failed":${failed}}\n` : ''
      // A shutdown's answer closes its connection.
      res.end(summary, isDraining())
    })
    ex.finished = true
  }

  /** Writes the answers at the head of the queue that have arrived, in order. */
  const flush = (): void => {
    if (undecided) return
    let out = ''
    for (let slot = queue[head]; slot?.answer !== undefined; slot = queue[head]) {
      queue[head++] = undefined
      bytesInFlight -= slot.bytes
      const a = slot.answer
      done++
      if (a.status >= 400) failed++
      if (!options.onlyFailures) out += answerText(a, undefined)
      else if (a.status >= 400) out += answerText(a, slot.number)
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head)
      head = 0
    }
    if (out !== '') write(out)
  }

  // Answers come in batches (one actor message carries many): one write and one pump per batch, not per answer.
  let scheduled = false
  const later = (): void => {
    if (scheduled) return
    scheduled = true
    queueMicrotask(() => {
      scheduled = false
      if (over) return
      flush()
      pump()
    })
  }

  /** Refuses the request as a whole: no line of its body was JSON, so none was applied and nothing was written. */
  const refuse = (): void => {
    over = true
    offDrain()
    if (paused) res.resume()
    const { number, error } = firstNotJson!
    ex.error(new ApiError('bad_request', `the body is not NDJSON (one JSON object per line): line ${number}: ${error.message}`))
  }

  const take = (line: SplitLine): boolean => {
    const slot: Slot = { number: line.number, bytes: line.kind === 'line' ? line.bytes.length : 0, answer: undefined }
    let sync = true
    const notJson = handle(line, (a) => {
      if (slot.answer !== undefined || over) return
      slot.answer = a
      if (sync) return
      later()
    })
    sync = false
    if (notJson === undefined) undecided = false
    else if (undecided) {
      firstNotJson ??= { number: line.number, error: notJson }
      if (++notJsonLines >= NOT_JSON_BEFORE_REFUSAL) {
        refuse()
        return false
      }
    }
    if (notJson !== undefined && slot.answer === undefined) slot.answer = lineError(notJson, ex.publicUrl)
    queue.push(slot)
    bytesInFlight += slot.bytes
    return true
  }

  /** The window has room for another line (at least one is always let through). */
  const room = (): boolean => inFlight() < options.window && (inFlight() === 0 || bytesInFlight < options.windowBytes)

  function pump(): void {
    if (over) return
    while (!stopped && !blocked && room()) {
      const line = lines.next()
      if (line === undefined) break
      if (!take(line)) return
    }
    if (undecided && notJsonLines > 0) {
      // Held lines are never answered while undecided: a window full of them would wait for ever.
      if (lines.exhausted || (!stopped && !room())) {
        refuse()
        return
      }
      // A shutdown stops the intake: the lines held so far are answered as what they are.
      if (stopped) undecided = false
    }
    flush()
    if (over) return
    if (lines.exhausted) stopped = true
    if (stopped && inFlight() === 0) {
      finish()
      return
    }
    // Stopped by a shutdown, the rest of the body is not read either.
    const hungry = !stopped && !blocked && inFlight() < options.window && bytesInFlight < options.windowBytes
    if (hungry && paused) {
      paused = false
      res.resume()
    } else if (!hungry && !paused) {
      paused = true
      res.pause()
    }
  }

  // The body the dispatcher held while the token was checked; else read from now on.
  const intake = ex.intake ?? new BodyIntake(ex)
  intake.read((chunk, isLast) => {
    if (over || stopped) return
    lines.push(chunk)
    if (isLast) lines.end()
    pump()
  })
}
