// One access line and one request metric per answered (or abandoned)
// exchange, written where every answer is written (src/http/exchange.ts),
// so no handler has to. The line names the route template, never the raw
// path: a path can carry a consent reference.
import { accessLine, audit, type Actor } from '../telemetry/log'
import { requestAnswered } from '../telemetry/metrics'
import { requestIdText, type RequestIdParts } from '../telemetry/request-id'
import { traces, type Span } from '../telemetry/traces'

/** The status an exchange is logged with when the client went away before its answer (nginx's convention). */
export const CLIENT_CLOSED = 499

/** An audit line written only if the exchange ends in success (a 2xx or 3xx), or, `evenIfCut`, when its client went away (with `"cut":true`). */
export interface PendingAudit {
  action: string
  who: Actor
  what?: Record<string, unknown>
  evenIfCut?: true | undefined
}

export interface Finished extends RequestIdParts {
  method: string
  route: string
  startedAt: number
  audit: PendingAudit | undefined
  span: Span | undefined
}

export function exchangeFinished(ex: Finished, status: number): void {
  const seconds = (performance.now() - ex.startedAt) / 1000
  requestAnswered(ex.route, ex.method, status, seconds)
  accessLine(ex, ex.method, ex.route, status, Math.round(seconds * 1e4))
  auditFinished(ex, status)
  if (ex.span !== undefined) traces?.endRequest(ex.span, ex.method, ex.route, status)
}

/** The pending audit line of an answered exchange (a line of a bulk body has no access line of its own, but its audit). */
export function auditFinished(ex: Finished, status: number): void {
  const pending = ex.audit
  if (pending === undefined) return
  if (status < 400) audit(pending.action, pending.who, { requestId: requestIdText(ex), ...pending.what })
  else if (status === CLIENT_CLOSED && pending.evenIfCut === true) audit(pending.action, pending.who, { requestId: requestIdText(ex), ...pending.what, cut: true })
}
