// The one server log: JSON lines on stderr (pino, asynchronous so that a
// request never waits for the terminal). stdout keeps only the plain start
// lines (src/main.ts). Secrets never go in: callers pass ids and names only.
import pino from 'pino'
import { accessLineRoom, encodeAccessLine, fragmentOf } from './access-line'
import { LineSink } from './line-sink'
import type { RequestIdParts } from './front/request-id'

// Asynchronous and batched: a write system call per 16 KiB rather than per
// line (per request, with access lines), and at least every FLUSH_MS so a
// quiet server's lines are not held back; flushLog writes what is left on exit.
const FLUSH_MS = 200
const sink = new LineSink(2)
setInterval(() => sink.flush(), FLUSH_MS).unref()

/** `time` is epoch milliseconds (pino's default: cheaper than formatting a date per line). */
export const log = pino({ level: 'info', base: { pid: process.pid } }, sink)

const INFO = 30
/** Whether info lines are written: set with the level, read once per request. */
let accessOn = true

/**
 * The access line, encoded by hand into the log's sink (src/access-line.ts):
 * the line pino would write, in order with every other line.
 */
export function accessLine(id: RequestIdParts, method: string, route: string, status: number, ms: number): void {
  if (!accessOn) return
  const fragment = fragmentOf(method, route)
  const buf = sink.room(accessLineRoom(id, fragment))
  sink.commit(encodeAccessLine(buf, sink.offset, Date.now(), id, fragment, status, ms))
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
