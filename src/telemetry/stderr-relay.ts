// The server's stderr relay, a process of its own (src/telemetry/stderr-guard.ts starts
// it): reads what the server writes to its descriptor 2 (a FIFO) and writes
// it to the real stderr as JSON lines (src/telemetry/stderr-lines.ts). It ends when the
// server's last write end closes, however the server ended (kill -9
// included), after writing what it has: signals to the process group do not
// stop it early.
//   node dist/src/stderr-relay.js <server pid> <fifo>
import { constants, openSync, rmSync, writeSync } from 'node:fs'
import { Socket } from 'node:net'
import { relayLines } from './stderr-lines'

/** A line begun without its newline is written this long after the last byte (LMDB's C code ends none). */
const PAUSE_MS = 50

const pid = Number(process.argv[2])
const fifo = process.argv[3]!
let rest = ''
let pause: NodeJS.Timeout | undefined

/**
 * The real stderr, opened again to append: the server writes its log there
 * through a descriptor of its own, and a file shared by two descriptors
 * without O_APPEND would be written over.
 */
const out = ((): number => {
  try {
    return openSync('/proc/self/fd/2', constants.O_WRONLY | constants.O_APPEND)
  } catch {
    return 2
  }
})()

function emit(chunk: string, flush: boolean): void {
  const relayed = relayLines(rest, chunk, pid, flush)
  rest = relayed.rest
  if (relayed.out.length === 0) return
  try {
    writeSync(out, relayed.out)
  } catch {
    // The real stderr is gone: nothing left to tell.
  }
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined)
// Opened without waiting for a writer (an open that waits blocks a libuv thread, and with it the exit): the
// server holds the FIFO open from before this process starts, so its end is the end of the server's writers.
let input: Socket
try {
  input = new Socket({ fd: openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false })
} catch {
  process.exit(0)
}
rmSync(fifo, { force: true })
// The server waits for this before it stops holding the FIFO open itself.
// A server whose stderr is a socket cannot open it again: it gets this process's copy over the IPC channel
// (kept open here too: this process writes there).
if (process.send !== undefined) {
  const stderr = new Socket({ fd: 2, readable: false, writable: true })
  process.send('stderr', stderr, { keepOpen: true }, () => process.disconnect?.())
}
// A server already gone closed the other end: nothing to tell it.
process.stdout.on('error', () => undefined)
process.stdout.write('reading\n', () => process.stdout.destroy())
input.setEncoding('utf8')
input.on('data', (chunk: string) => {
  if (pause !== undefined) clearTimeout(pause)
  emit(chunk, false)
  if (rest.length > 0) pause = setTimeout(() => emit('', true), PAUSE_MS)
})
input.on('end', () => {
  if (pause !== undefined) clearTimeout(pause)
  emit('', true)
  process.exit(0)
})
input.on('error', () => process.exit(0))
