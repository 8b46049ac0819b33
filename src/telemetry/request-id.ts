// Request ids without a string per request. A generated id is a random UUID
// drawn once per process whose last group (12 digits) is a counter: it is
// kept as its first 27 bytes (the "stem": 24 random characters and the
// counter's top 3 digits, shared by a billion requests) and the counter's
// low 9 digits (a small integer). Its digits are written straight into the
// buffer that needs them (the x-request-id header, the access line); the
// string is built only when a rare path asks for it (an error line, a
// stream). Strings per request were ~3,000 instructions of scavenges per
// get-node request (bench/MEASUREMENTS.md, "Table: 2026-11-23, full
// settings, quiet machine, three runs", "The access log's cost").
import { randomUUID } from 'node:crypto'

/** A request's id: the caller's (`given`, rare) or a generated one (`stem` and `seq`). */
export interface RequestIdParts {
  /** The caller's trace id, '' when the id was generated. */
  readonly givenId: string
  readonly idStem: Buffer
  readonly idSeq: number
}

/** Characters of a generated id. */
export const GENERATED_ID_LENGTH = 36
const STEM_LENGTH = 27
const LOW_DIGITS = 9
const LOW_SPAN = 1e9
const HIGH_SPAN = 1000

let high = 0
let low = 0
let stem = newStem(randomUUID().slice(0, 24))

function newStem(prefix: string): Buffer {
  return Buffer.from(prefix + String(high).padStart(3, '0'), 'latin1')
}

/** The next generated id's counter; read idStem() after it (the stem changes every billion ids). */
export function nextIdSeq(): number {
  if (low === LOW_SPAN) {
    low = 0
    high++
    // A new random prefix once the high digits wrap: ids stay unique within the process.
    const prefix = high === HIGH_SPAN ? randomUUID().slice(0, 24) : stem.toString('latin1', 0, 24)
    if (high === HIGH_SPAN) high = 0
    stem = newStem(prefix)
  }
  return low++
}

export const idStem = (): Buffer => stem

/** The counter's 9 digits into `buf`, zero-padded, ending before `end`. */
function putCounter(buf: Uint8Array, end: number, seq: number): void {
  for (let i = end - 1; i >= end - LOW_DIGITS; i--) {
    buf[i] = 48 + (seq % 10)
    seq = (seq / 10) | 0
  }
}

/** Writes the generated id's 36 characters into `buf` from `at`; returns where it ends. */
export function putGeneratedId(buf: Uint8Array, at: number, idStem: Buffer, seq: number): number {
  buf.set(idStem, at)
  putCounter(buf, at + GENERATED_ID_LENGTH, seq)
  return at + GENERATED_ID_LENGTH
}

// The x-request-id header, name and value, as ArrayBuffers of their own: uWebSockets.js takes
// those without converting them (a string is copied through a UTF-8 conversion, a Buffer's view
// costs ~150 instructions more than a plain ArrayBuffer). The value is rewritten per answer
// (uWebSockets.js copies it while writeHeader runs).
export const REQUEST_ID_HEADER: ArrayBuffer = new Uint8Array(Buffer.from('x-request-id')).buffer
const headerBuffer = new ArrayBuffer(GENERATED_ID_LENGTH)
const headerValue = new Uint8Array(headerBuffer)
let headerStem: Buffer | undefined

/** The id as bytes, valid until the next call: for uWebSockets.js's writeHeader. */
export function requestIdBytes(id: RequestIdParts): ArrayBuffer | string {
  if (id.givenId !== '') return id.givenId
  if (headerStem !== id.idStem) {
    headerStem = id.idStem
    headerValue.set(id.idStem, 0)
  }
  putCounter(headerValue, GENERATED_ID_LENGTH, id.idSeq)
  return headerBuffer
}

/** The id as a string (built on each call: for the rare lines and headers that need one). */
export function requestIdText(id: RequestIdParts): string {
  if (id.givenId !== '') return id.givenId
  return id.idStem.toString('latin1', 0, STEM_LENGTH) + String(id.idSeq).padStart(LOW_DIGITS, '0')
}

const TRACE_PARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/
const SAFE_ID = /^[\w.:@/+=-]{1,128}$/

/**
 * The caller's trace id (platform-context-trace-id, else traceparent's trace
 * id) when it is a plain token, else '' (then an id is generated). Always
 * JSON-safe (no quote, backslash or control character): the access line
 * writes it unquoted.
 */
export function givenRequestId(traceId: string, traceParent: string): string {
  if (traceId !== '' && SAFE_ID.test(traceId)) return traceId
  return traceParentId(traceParent)
}

/** The trace id of a W3C traceparent header (32 hex digits), or '' when there is none or it is malformed. */
export function traceParentId(traceParent: string): string {
  if (traceParent === '') return ''
  const m = TRACE_PARENT.exec(traceParent)
  return m === null ? '' : m[1]!
}

/** A request's id parts from its two trace headers. */
export function requestIdParts(traceId: string, traceParent: string): RequestIdParts {
  const givenId = givenRequestId(traceId, traceParent)
  const idSeq = givenId === '' ? nextIdSeq() : 0
  return { givenId, idStem: stem, idSeq }
}

/** The request id as a string from the two trace headers (tests and callers outside an exchange). */
export const requestIdOf = (traceId: string, traceParent: string): string => requestIdText(requestIdParts(traceId, traceParent))
