// What every graph write carries to its shard actor: the consent reference,
// the client, the trace id and the scheduling and decay headers, read once.
import type { AccessTokenRecord } from '../auth/models/auth-store'
import { now } from '../core/clock'
import type { Exchange } from '../http/exchange'
import type { WriteContext } from '../contract/messages'
import { timing } from './timing'
import { consentReference } from './validate'

export function traceId(ex: Exchange): string | undefined {
  const t = ex.headers['platform-context-trace-id'].trim()
  return t === '' ? undefined : t
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
