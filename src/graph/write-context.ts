// What every graph write carries to its shard actor: the consent reference,
// the client, the trace id and the scheduling and decay headers, read once.
import { Type } from '@sinclair/typebox'
import type { AccessTokenRecord } from '../auth/models/auth-store'
import { now } from '../core/clock'
import type { Exchange } from '../http/exchange'
import type { WriteContext } from '../contract/messages'
import { traceParentId } from '../telemetry/request-id'
import { timing } from './timing'
import { consentReference } from './validate'

const TRACE = {
  'platform-context-trace-id': Type.Optional(Type.String({ description: 'the business transaction\'s trace id: the id of the events this call causes (without it, the trace id of traceparent)' })),
  traceparent: Type.Optional(Type.String({ description: 'W3C Trace Context: the caller\'s span; its trace id is the events\' id when platform-context-trace-id is absent, and with traces on the request\'s span is its child' })),
}

/** The headers a delete reads (its events' id). */
export const DELETE_HEADERS = Type.Object(TRACE)

/** The headers writeContext reads: the owner's consent reference (required), the trace id, scheduling and decay. */
export const WRITE_HEADERS = Type.Object({
  'consent-reference': Type.String({ description: 'a granted consent reference of the tenant: the owner of what is written', example: 'cr_AAAAAAAAAAAAAAAAAAAAAA' }),
  ...TRACE,
  'platform-schedule-event-at': Type.Optional(Type.String({ description: 'when to send a scheduled event: ISO 8601 time or a duration (days, hours, minutes, seconds)' })),
  'platform-schedule-event-parameter': Type.Optional(Type.String({ description: 'the data the scheduled event carries' })),
  'platform-decay-at': Type.Optional(Type.String({ description: 'when to send a decay event: ISO 8601 time or a duration' })),
  'platform-decay-parameters': Type.Optional(Type.String({ description: 'the data the decay event carries' })),
})

/** The events' id: platform-context-trace-id, else the trace id of the caller's traceparent (W3C), else none (a new id per event). */
export function traceId(ex: Exchange): string | undefined {
  const t = ex.headers['platform-context-trace-id'].trim()
  if (t !== '') return t
  const parent = traceParentId(ex.headers.traceparent.trim())
  return parent === '' ? undefined : parent
}

export function writeContext(ex: Exchange, token: AccessTokenRecord): WriteContext {
  const h = ex.headers
  const t = now()
  return {
    consent: consentReference(h['consent-reference']),
    client: token.client ?? '',
    trace: traceId(ex),
    schedule: timing('platform-schedule-event-at', h['platform-schedule-event-at'], h['platform-schedule-event-parameter'], t),
    decay: timing('platform-decay-at', h['platform-decay-at'], h['platform-decay-parameters'], t),
  }
}
