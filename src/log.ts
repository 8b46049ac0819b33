// The one server log: JSON lines on stderr (pino, asynchronous so that a
// request never waits for the terminal). stdout keeps only the plain start
// lines (src/main.ts). Secrets never go in: callers pass ids and names only.
import pino from 'pino'

// Asynchronous and batched: a write system call per 4 KiB rather than per
// line (per request, with access lines), and at least every FLUSH_MS so a
// quiet server's lines are not held back; pino flushes what is left on exit.
const FLUSH_MS = 200
const destination = pino.destination({ fd: 2, sync: false, minLength: 4096 })
setInterval(() => destination.flush(), FLUSH_MS).unref()

/** `time` is epoch milliseconds (pino's default: cheaper than formatting a date per line). */
export const log = pino({ level: 'info', base: { pid: process.pid } }, destination)

/** One of pino's levels (the config loader checked it: src/config.ts LOG_LEVELS). */
const PID = process.pid
const INFO = 30

/**
 * The access line, built by hand: the same JSON pino writes, without its
 * generic serialization, because it is written once per request.
 */
export function accessLine(requestId: string, method: string, route: string, status: number, ms: number): void {
  if (log.levelVal > INFO) return
  destination.write(`{"level":30,"time":${Date.now()},"pid":${PID},"requestId":${JSON.stringify(requestId)},"method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"status":${status},"ms":${ms},"msg":"request"}\n`)
}

export function setLogLevel(level: string): void {
  log.level = level
}

/** Writes what is buffered now (before process.exit, which skips the asynchronous writes). */
export function flushLog(): void {
  destination.flushSync()
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
