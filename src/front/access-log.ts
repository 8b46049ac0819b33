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

/** The caller's trace id (platform-context-trace-id, else traceparent's trace id) when it is a plain token; else a new one. */
export function requestIdOf(traceId: string, traceParent: string): string {
  if (traceId !== '' && SAFE_ID.test(traceId)) return traceId
  const m = TRACE_PARENT.exec(traceParent)
  if (m !== null) return m[1]!
  return randomUUID()
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
