// The access line as bytes, encoded straight into the log's buffer: the same
// JSON line pino writes for `log.info({ requestId, method, route, status, ms }, 'request')`
// (level, time, pid first, msg last), without building a string. At a line
// per request, the strings a template builds (and the scavenges their bytes
// bring) were most of what the log still cost (bench/MEASUREMENTS.md,
// "Table: 2026-11-23, full settings, quiet machine, three runs", "The access
// log's cost"); here prepared bytes are copied (the start of the line per
// millisecond, the method and route per route, the status per status) and
// the duration is written digit by digit.
import { GENERATED_ID_LENGTH, putGeneratedId, type RequestIdParts } from './request-id'

const bytes = (s: string): Buffer => Buffer.from(s)
const LINE_END = bytes(',"msg":"request"}\n')
/** The line's bytes besides the request id and the method-and-route fragment (numbers included, generously). */
const FIXED_BYTES = 128

// The line's start up to the request id changes once a millisecond: kept
// as bytes while the millisecond lasts (epoch milliseconds are doubles, and
// a double's decimal string costs ~500 instructions).
let headTime = -1
let head = bytes('')

function headOf(time: number): Buffer {
  if (time !== headTime) {
    headTime = time
    head = bytes(`{"level":30,"time":${time},"pid":${process.pid},"requestId":"`)
  }
  return head
}

/** `200,"ms":` by status (100-999). */
const statusParts: Buffer[] = []
const statusPart = (status: number): Buffer => (statusParts[status] ??= bytes(`${status},"ms":`))

/** The methods whose fragments are kept; a client's other method is encoded each time (no cache growth). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
/** `","method":"GET","route":"/graph/v1/...","status":` by route template and method. */
const fragments = new Map<string, Map<string, Buffer>>()

/** Whether the method's fragments are kept (the standard ones), so that a client cannot grow the caches. */
export const isCachedMethod = (method: string): boolean => METHODS.has(method)

export const fragmentBytes = (method: string, route: string): Buffer => bytes(`","method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"status":`)

export function fragmentOf(method: string, route: string): Buffer {
  if (!METHODS.has(method)) return fragmentBytes(method, route)
  let byMethod = fragments.get(route)
  if (byMethod === undefined) fragments.set(route, (byMethod = new Map()))
  let fragment = byMethod.get(method)
  if (fragment === undefined) byMethod.set(method, (fragment = fragmentBytes(method, route)))
  return fragment
}

/** The most bytes a line with this id and fragment takes. */
export const accessLineRoom = (id: RequestIdParts, fragment: Buffer): number => FIXED_BYTES + (id.givenId === '' ? GENERATED_ID_LENGTH : id.givenId.length) + fragment.length

function put(buf: Buffer, at: number, part: Buffer): number {
  buf.set(part, at)
  return at + part.length
}

/** A non-negative integer's decimal digits (exact up to 2^53: epoch milliseconds are doubles). */
function putInteger(buf: Buffer, at: number, n: number): number {
  let digits = 1
  for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++
  for (let i = at + digits - 1; i >= at; i--) {
    buf[i] = 48 + (n % 10)
    n = Math.floor(n / 10)
  }
  return at + digits
}

/** `ms`, a multiple of 0.1, as JSON writes it (`12`, `0.3`). */
function putTenths(buf: Buffer, at: number, ms: number): number {
  const tenths = Math.round(ms * 10)
  const whole = Math.floor(tenths / 10)
  let p = putInteger(buf, at, whole)
  const fraction = tenths - whole * 10
  if (fraction !== 0) {
    buf[p++] = 46 // '.'
    buf[p++] = 48 + fraction
  }
  return p
}

/**
 * Encodes the line into `buf` from `at` (which has accessLineRoom bytes of
 * room); returns where it ends. A given id goes in as is: it must be ASCII
 * and JSON-safe, as givenRequestId's are (src/telemetry/request-id.ts).
 */
export function encodeAccessLine(buf: Buffer, at: number, time: number, id: RequestIdParts, fragment: Buffer, status: number, ms: number): number {
  let p = put(buf, at, headOf(time))
  p = id.givenId === '' ? putGeneratedId(buf, p, id.idStem, id.idSeq) : p + buf.write(id.givenId, p, 'latin1')
  p = put(buf, p, fragment)
  p = put(buf, p, status >= 100 && status <= 999 ? statusPart(status) : bytes(`${status},"ms":`))
  p = putTenths(buf, p, ms)
  return put(buf, p, LINE_END)
}
