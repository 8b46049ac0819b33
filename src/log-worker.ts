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

/** While lines keep coming, the ring is read this often (the front thread wakes a sleeping reader, which costs it a system call). */
const POLL_MS = 1
/** A quiet server's lines are written at least this often. */
const FLUSH_MS = 200

const { ring, fd, pid } = workerData as LogThreadData
const sink = new LineSink(fd)
const reader = new RingReader(ring, sink, pid)
// Also what keeps this thread alive while it waits (a pending Atomics.waitAsync does not).
setInterval(() => sink.flush(), FLUSH_MS)

/** The newest flush asked for that this thread has taken on. */
let flushHandled = 0

function run(): void {
  const read = reader.drain()
  const asked = reader.flushAsked
  if (asked !== flushHandled) {
    flushHandled = asked
    // The front thread waits (src/log.ts flushLog): everything so far, written synchronously, once the write under way is done.
    sink.whenIdle(() => {
      reader.drain()
      sink.flushSync()
      reader.flushDone(asked)
    })
  }
  if (read > 0) {
    setTimeout(run, POLL_MS)
    return
  }
  sink.flush()
  const woken = reader.sleep(flushHandled)
  if (woken === undefined) setImmediate(run)
  else void woken.then(run)
}

run()
