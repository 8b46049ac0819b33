// The scheduling and decay headers of spec 4: `platform-schedule-event-at`
// (and `platform-decay-at`) is an ISO 8601 timestamp with a zone
// (2026-12-01T10:00:00Z, 2026-12-01T11:00:00+01:00) or a duration of days,
// hours, minutes and seconds from now: ISO form `P1DT2H30M5S`, `PT90S`, or the
// short form `1d2h30m5s`, `90s`, `1h30m`. Anything else is 400.
import { ApiError } from '../core/errors'
import type { Timing } from '../contract/messages'

const ISO_DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/
const SHORT_DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/

function durationMs(m: RegExpExecArray): number {
  const [, d, h, min, s] = m
  return ((Number(d ?? 0) * 24 + Number(h ?? 0)) * 60 + Number(min ?? 0)) * 60_000 + Number(s ?? 0) * 1000
}

/** The last instant an ISO 8601 timestamp of four-digit years can name: the events carry the time in that form. */
export const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

function parsed(value: string, now: number): number | undefined {
  const iso = ISO_DURATION.exec(value)
  if (iso !== null && value !== 'P' && !value.endsWith('T')) return now + durationMs(iso)
  const short = SHORT_DURATION.exec(value)
  if (short !== null && value !== '') return now + durationMs(short)
  if (TIMESTAMP.test(value)) {
    const t = Date.parse(value)
    if (!Number.isNaN(t)) return t
  }
  return undefined
}

/** Epoch ms of a header value, or an ApiError naming the header. */
export function parseWhen(header: string, raw: string, now: number): number {
  const t = parsed(raw.trim(), now)
  if (t === undefined) {
    throw new ApiError('bad_request', `${header} must be an ISO 8601 timestamp with a zone or a duration of days, hours, minutes and seconds (P1DT2H, 2s, 1h30m), got "${raw}"`)
  }
  // A huge duration (99999999d) parses, but no timestamp can name it: refuse it here, not in the shard.
  if (!Number.isFinite(t) || t > LATEST_TIME || t < 0) {
    throw new ApiError('bad_request', `${header} must name a time between 1970 and 9999-12-31T23:59:59.999Z, got "${raw}"`)
  }
  return t
}

export function timing(header: string, at: string, parameter: string, now: number): Timing | undefined {
  if (at === '') return undefined
  return { at: parseWhen(header, at, now), parameter: parameter === '' ? undefined : parameter }
}
