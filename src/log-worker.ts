// The log's thread: reads the ring the front thread fills (src/log-ring.ts),
// writes the access lines' text and pino's lines to the log's file
// descriptor (stderr) through a LineSink, in the order they were logged.
// Started by src/log.ts startLogThread().
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
/** How long to wait before trying again when stderr took nothing for ~2 s. */
const STUCK_MS = 100
const KEEP_ALIVE_MS = 1 << 30

const { ring, fd, pid } = workerData as LogThreadData
// Synchronous writes: this thread may wait for stderr. Nothing is then in flight when it ends, and a stderr
// that does not take lines leaves them in the ring, which fills (lines then counted as dropped) rather than memory.
const sink = new LineSink(fd, 16 * 1024, true)
const reader = new RingReader(ring, sink, pid)
// What keeps this thread alive while it waits (a pending Atomics.waitAsync does not).
setInterval(() => undefined, KEEP_ALIVE_MS)
// Ended by a fault of its own: what it has read goes out before the front thread writes the ring's rest (src/log.ts takeOver).
process.on('exit', () => sink.flushSync())

/** The newest flush asked for that this thread has done. */
let flushHandled = 0
let flushedAt = 0
let idlePolls = 0

function run(): void {
  // Read before the ring: every line logged before the ask is then in this drain.
  const asked = reader.flushAsked
  const read = reader.drain()
  // Written when the ring is empty, when the front thread waits for it (src/log.ts flushLog), and at least every FLUSH_MS.
  if (read === 0 || asked !== flushHandled || Date.now() - flushedAt >= FLUSH_MS) {
    if (!sink.flushSync()) {
      setTimeout(run, STUCK_MS)
      return
    }
    flushedAt = Date.now()
    if (asked !== flushHandled) reader.flushDone((flushHandled = asked))
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
