// The one server log: JSON lines on stderr (pino, asynchronous so that a
// request never waits for the terminal). stdout keeps only the plain start
// lines (src/main.ts). Secrets never go in: callers pass ids and names only.
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import pino from 'pino'
import { accessLineRoom, encodeAccessLine, fragmentOf } from './access-line'
import { LineSink } from './line-sink'
import { onStderrMoved, stderrFd } from './stderr-guard'
import { newRingBuffer, RingWriter } from './log-ring'
import type { LogThreadData } from './log-worker'
import type { RequestIdParts } from './request-id'

// Asynchronous and batched: a write system call per 16 KiB rather than per
// line (per request, with access lines), and at least every FLUSH_MS so a
// quiet server's lines are not held back; flushLog writes what is left on exit.
const FLUSH_MS = 200
// The real stderr: in the server, descriptor 2 is its relay's FIFO (src/telemetry/stderr-guard.ts).
const sink = new LineSink(stderrFd())
onStderrMoved((fd) => sink.useFd(fd))
setInterval(() => sink.flush(), FLUSH_MS).unref()

// The server hands its lines to a thread of its own (startLogThread): then
// `ring` takes every line, pino's as text and the access lines as records
// the log's thread writes out (src/telemetry/log-ring.ts). Other programs, and the
// server before that thread starts or after it is gone, write to `sink` here.
let ring: RingWriter | undefined
let thread: Worker | undefined
/**
 * How long flushLog waits for the log's thread with no line written by it,
 * before this thread writes the rest itself (or, the log's thread stuck in a
 * write, gives those lines up and counts them).
 */
const STALL_MS = 2000

/** pino's destination. */
const destination = {
  write(line: string): void {
    if (ring === undefined) sink.write(line)
    else ring.text(line)
  },
}

/** `time` is epoch milliseconds (pino's default: cheaper than formatting a date per line). */
export const log = pino({ level: 'info', base: { pid: process.pid } }, destination)

const INFO = 30
/** Whether info lines are written: set with the level, read once per request. */
let accessOn = true

/**
 * The access line: the line pino would write, in order with every other
 * line, written by hand (src/telemetry/access-line.ts) by the log's thread or here.
 * `tenths`: the duration in tenths of milliseconds (an integer: no number
 * allocated to pass it).
 */
export function accessLine(id: RequestIdParts, method: string, route: string, status: number, tenths: number): void {
  if (!accessOn) return
  if (ring !== undefined) {
    ring.access(id, method, route, status, tenths)
    return
  }
  const ms = tenths / 10
  const fragment = fragmentOf(method, route)
  const buf = sink.room(accessLineRoom(id, fragment))
  sink.commit(encodeAccessLine(buf, sink.offset, Date.now(), id, fragment, status, ms))
}

/** One of pino's levels (the config loader checked it: src/config/load-config.ts LOG_LEVELS). */
export function setLogLevel(level: string): void {
  log.level = level
  accessOn = log.levelVal <= INFO
}

/** For tests: a smaller ring, another script for the thread (one that fails). */
export interface LogThreadOptions {
  ringBytes?: number
  workerFile?: string
}

/**
 * From now on the lines are formatted and written by a thread of their own
 * (src/telemetry/log-worker.ts), so that the front thread only copies a few numbers
 * per access line. The server's start calls it.
 */
export function startLogThread(options: LogThreadOptions = {}): void {
  if (thread !== undefined) return
  sink.flushSync()
  const buffer = newRingBuffer(options.ringBytes)
  const data: LogThreadData = { ring: buffer, fd: stderrFd(), pid: process.pid }
  const started = new Worker(options.workerFile ?? join(__dirname, 'log-worker.js'), { workerData: data })
  ring = counted = new RingWriter(buffer)
  thread = started
  started.unref()
  // Taken over once the thread has ended (after its own last writes: two writers at once would cut lines).
  let fault: unknown
  started.on('error', (err) => { fault = err })
  started.on('exit', (code) => takeOver(started, fault ?? new Error(`the log thread exited with code ${code}`)))
  // An exit without flushLog (an uncaught exception) still writes what the ring holds.
  process.once('exit', flushLog)
}

/** The log's thread is gone: the ring's lines it had not written yet, then every line, are written here. */
function takeOver(gone: Worker, err: unknown): void {
  if (thread !== gone || ring === undefined) return
  const writer = ring
  ring = undefined
  thread = undefined
  sink.writeSynchronously()
  writer.readerFor(sink).drain()
  log.error({ err }, 'log: the log thread stopped; the main thread writes the log from now on')
}

/** Lines dropped because the log's thread fell behind by a whole ring (counted in /metrics). */
export const droppedLogLines = (): number => counted?.dropped ?? 0
let counted: RingWriter | undefined

/**
 * Writes everything logged so far, synchronously (before process.exit, which
 * skips asynchronous writes and ends the log's thread): asks the log's thread
 * and waits for it while it writes; if it writes nothing for STALL_MS, writes
 * the rest here, once that thread is between two turns (a line is never
 * written twice), or, that thread stuck in a write, counts the rest as dropped.
 */
export function flushLog(): void {
  const writer = ring
  const worker = thread
  if (writer !== undefined && worker !== undefined && !writer.waitFlushed(writer.askFlush(), STALL_MS)) {
    ring = undefined
    thread = undefined
    sink.writeSynchronously()
    const reader = writer.seize(sink, STALL_MS)
    if (reader !== undefined) reader.drain()
    else {
      const dropped = writer.abandon()
      log.error({ dropped }, `log: ${dropped} lines dropped: the log thread was stuck writing to stderr`)
    }
    void worker.terminate()
  }
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
