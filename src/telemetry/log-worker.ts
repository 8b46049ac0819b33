// The log's thread: reads the ring the front thread fills (src/telemetry/log-ring.ts),
// writes the access lines' text and pino's lines to the log's file
// descriptor (stderr) through a LineSink, in the order they were logged.
// Started by src/telemetry/log.ts startLogThread().
import { workerData } from 'node:worker_threads'
import { LineSink } from './line-sink'
import { RingReader } from './log-ring'

export interface LogThreadData {
  ring: SharedArrayBuffer
  fd: number
  pid: number
}

/**
 * While lines keep coming, and for IDLE_POLLS polls after the last, the ring
 * is read this often; only then does this thread sleep until woken (waking
 * it costs the front thread a system call, ~1 µs, which at a wake per
 * request was most of what the ring saved).
 */
const POLL_MS = 1
const IDLE_POLLS = 50
/** Lines gathered while they keep coming are written at least this often. */
const FLUSH_MS = 200
/**
 * Records read per turn, at most: between two turns the front thread may
 * take the ring over (src/telemetry/log.ts flushLog) and this thread's timers run.
 */
const TURN_BYTES = 256 * 1024
const KEEP_ALIVE_MS = 1 << 30

const { ring, fd, pid } = workerData as LogThreadData
// Synchronous writes: this thread may wait for stderr, as long as it takes. Nothing is then in flight when it
// ends, and a stderr that does not take lines leaves them in the ring, which fills (lines then counted as
// dropped) rather than memory. Nothing is written at this thread's exit: the lines it has read but not
// written are still in the ring, for the front thread (src/telemetry/log.ts takeOver).
const sink = new LineSink(fd, 16 * 1024, true, Infinity)
const reader = new RingReader(ring, sink, pid)
// What keeps this thread alive while it waits (a pending Atomics.waitAsync does not).
const keepAlive = setInterval(() => undefined, KEEP_ALIVE_MS)
// Ended by a fault in a turn: it writes no more, so the front thread may take the ring at once (src/telemetry/log.ts flushLog).
process.on('exit', () => reader.release())

/** The newest flush asked for that this thread has done. */
let flushHandled = 0
let flushedAt = 0
let idlePolls = 0

/** A turn: read what is there (up to TURN_BYTES), write it when it is time. */
function run(): void {
  if (!reader.acquire()) {
    // The front thread writes the log from now on (it has what this thread had not written yet).
    clearInterval(keepAlive)
    return
  }
  // Read before the ring: every line logged before the ask is then in a drain that catches up.
  const asked = reader.flushAsked
  const read = reader.drain(TURN_BYTES)
  // Written when the ring is empty, when the front thread waits for it (src/telemetry/log.ts flushLog), and at least every FLUSH_MS.
  const flushWanted = reader.caughtUp && asked !== flushHandled
  if ((reader.caughtUp && read === 0) || flushWanted || Date.now() - flushedAt >= FLUSH_MS) {
    reader.flush()
    flushedAt = Date.now()
    if (flushWanted) reader.flushDone((flushHandled = asked))
  }
  reader.release()
  if (!reader.caughtUp) {
    setImmediate(run)
    return
  }
  idlePolls = read > 0 ? 0 : idlePolls + 1
  if (idlePolls <= IDLE_POLLS) {
    setTimeout(run, POLL_MS)
    return
  }
  const woken = reader.sleep(flushHandled)
  if (woken === undefined) setImmediate(run)
  else void woken.then(run)
}

run()
