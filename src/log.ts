// The one server log: JSON lines on stderr (pino, asynchronous so that a
// request never waits for the terminal). stdout keeps only the plain start
// lines (src/main.ts). Secrets never go in: callers pass ids and names only.
import pino from 'pino'
import { LineSink } from './line-sink'

// Asynchronous and batched: a write system call per 16 KiB rather than per
// line (per request, with access lines), and at least every FLUSH_MS so a
// quiet server's lines are not held back; flushLog writes what is left on exit.
const FLUSH_MS = 200
const sink = new LineSink(2)
setInterval(() => sink.flush(), FLUSH_MS).unref()

/** `time` is epoch milliseconds (pino's default: cheaper than formatting a date per line). */
export const log = pino({ level: 'info', base: { pid: process.pid } }, sink)

const PID = process.pid
const INFO = 30
/** Whether info lines are written: set with the level, read once per request. */
let accessOn = true

/** `"method":"GET","route":"/graph/v1/..."` by route template and method: built once, not per request. */
const fragments = new Map<string, Map<string, string>>()

function fragmentOf(method: string, route: string): string {
  let byMethod = fragments.get(route)
  if (byMethod === undefined) fragments.set(route, (byMethod = new Map()))
  let fragment = byMethod.get(method)
  if (fragment === undefined) byMethod.set(method, (fragment = `"method":${JSON.stringify(method)},"route":${JSON.stringify(route)}`))
  return fragment
}

/**
 * The access line, built by hand and written to the log's sink: the same
 * JSON line pino writes for `log.info({ requestId, method, route, status, ms }, 'request')`
 * (level, time, pid first, msg last), without its generic serialization,
 * because it is written once per request. `requestId` goes in unquoted: it
 * must be JSON-safe, as requestIdOf's are (src/front/access-log.ts).
 */
export function accessLine(requestId: string, method: string, route: string, status: number, ms: number): void {
  if (accessOn) sink.write(formatAccessLine(Date.now(), requestId, method, route, status, ms))
}

// Epoch milliseconds are doubles (above 2^31), and a double's decimal string
// costs ~500 instructions: the time's text is kept while the millisecond lasts.
let lastTime = 0
let lastTimeText = '0'

function timeText(time: number): string {
  if (time !== lastTime) {
    lastTime = time
    lastTimeText = String(time)
  }
  return lastTimeText
}

/** `ms` (a multiple of 0.1) as JSON writes it, from small integers rather than a double's conversion. */
function tenthsText(ms: number): string {
  const tenths = Math.round(ms * 10)
  const whole = Math.floor(tenths / 10)
  const fraction = tenths - whole * 10
  return fraction === 0 ? String(whole) : `${whole}.${fraction}`
}

/** The access line's text (exported for the test that holds it to pino's own output). */
export function formatAccessLine(time: number, requestId: string, method: string, route: string, status: number, ms: number): string {
  return `{"level":30,"time":${timeText(time)},"pid":${PID},"requestId":"${requestId}",${fragmentOf(method, route)},"status":${status},"ms":${tenthsText(ms)},"msg":"request"}\n`
}

/** One of pino's levels (the config loader checked it: src/config.ts LOG_LEVELS). */
export function setLogLevel(level: string): void {
  log.level = level
  accessOn = log.levelVal <= INFO
}

/** Writes what is buffered now (before process.exit, which skips the asynchronous writes). */
export function flushLog(): void {
  sink.flushSync()
}

/** Who did something: the calling client and, for a user's token, the user. */
export interface Actor {
  client?: string | undefined
  subject?: string | undefined
}

/**
 * An audit line: `action` names what changed (`admin.clients.update`,
 * `consent.revoke`, `sign_in.failure` ...), `who` who did it, `what` the ids
 * of what changed. Never a token, secret, password, cookie, code or consent reference.
 */
export function audit(action: string, who: Actor, what: Record<string, unknown> = {}): void {
  log.info({ audit: action, client: who.client, subject: who.subject, ...what }, `audit ${action}`)
}
