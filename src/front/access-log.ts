// One access line and one request metric per answered (or abandoned)
// exchange, written where every answer is written (src/front/exchange.ts),
// so no handler has to. The line names the route template, never the raw
// path: a path can carry a consent reference.
import { randomUUID } from 'node:crypto'
import { accessLine, audit, type Actor } from '../log'
import { requestAnswered } from '../metrics'

/** The status an exchange is logged with when the client went away before its answer (nginx's convention). */
export const CLIENT_CLOSED = 499

/** An audit line written only if the exchange ends in success (a 2xx or 3xx). */
export interface PendingAudit {
  action: string
  who: Actor
  what?: Record<string, unknown>
}

const TRACE_PARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/
const SAFE_ID = /^[\w.:@/+=-]{1,128}$/

/**
 * A new request id: a random UUID drawn once per process whose last group
 * (12 digits) is a counter. Unique within the process, 74 random bits apart
 * between processes, and cheaper than a UUID per request. The counter's
 * digits come from a table of 000-999 rather than String(number), which
 * puts every new number's string into V8's number-string cache.
 */
const DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'))
const LOW_SPAN = 1_000_000
let idHigh = 0
let idLow = 0
const sixDigits = (n: number): string => DIGITS[Math.floor(n / 1000)]! + DIGITS[n % 1000]!
let idStem = newStem()

/** The UUID's first 24 characters and the counter's high 6 digits (a new random prefix once those wrap). */
function newStem(): string {
  if (idHigh === LOW_SPAN) idHigh = 0
  const prefix = idHigh === 0 ? randomUUID().slice(0, 24) : idStem.slice(0, 24)
  return prefix + sixDigits(idHigh)
}

function newRequestId(): string {
  if (idLow === LOW_SPAN) {
    idLow = 0
    idHigh++
    idStem = newStem()
  }
  return idStem + sixDigits(idLow++)
}

/**
 * The caller's trace id (platform-context-trace-id, else traceparent's trace
 * id) when it is a plain token; else a new one. Always JSON-safe (no quote,
 * backslash or control character): the access line writes it unquoted.
 */
export function requestIdOf(traceId: string, traceParent: string): string {
  if (traceId !== '' && SAFE_ID.test(traceId)) return traceId
  if (traceParent !== '') {
    const m = TRACE_PARENT.exec(traceParent)
    if (m !== null) return m[1]!
  }
  return newRequestId()
}

export interface Finished {
  requestId: string
  method: string
  route: string
  startedAt: number
  audit: PendingAudit | undefined
}

export function exchangeFinished(ex: Finished, status: number): void {
  const seconds = (performance.now() - ex.startedAt) / 1000
  requestAnswered(ex.route, ex.method, status, seconds)
  accessLine(ex.requestId, ex.method, ex.route, status, Math.round(seconds * 1e4) / 10)
  const pending = ex.audit
  if (pending !== undefined && status < 400) audit(pending.action, pending.who, { requestId: ex.requestId, ...pending.what })
}
