// Every line on the server's stderr is JSON, including what the log does not
// write: LMDB's C code prints to file descriptor 2 without a newline (a full
// disk), and libraries and Node itself print plain text there. The server's
// first step makes descriptor 2 a FIFO read by a relay process
// (src/stderr-relay.ts), which writes it to the real stderr as JSON lines;
// the log and the start's `error:` line write to the real stderr, kept open
// under another descriptor (stderrFd()). Node cannot dup2, but open() takes
// the lowest free descriptor: 2, right after it is closed.
import { execFileSync, spawn } from 'node:child_process'
import { closeSync, constants, openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

let realStderr = 2

/** Where the log and the start's error line go: the real stderr. */
export function stderrFd(): number {
  return realStderr
}

/**
 * Called once, first thing, by the server (before any thread or file is
 * opened). Where stderr cannot be opened again (a socket: systemd's journal,
 * or a parent's socketpair) or no FIFO can be made, stderr stays as it is.
 */
export function guardStderr(): void {
  let real: number
  try {
    real = openSync('/proc/self/fd/2', constants.O_WRONLY | constants.O_APPEND)
  } catch {
    return
  }
  const fifo = join(tmpdir(), `graph-stderr-${process.pid}-${randomBytes(6).toString('hex')}`)
  let holder: number
  try {
    execFileSync('mkfifo', ['-m', '600', fifo])
    // Read and write: a FIFO opened so never blocks, and holds what is written until the relay reads it.
    holder = openSync(fifo, constants.O_RDWR)
  } catch {
    closeSync(real)
    rmSync(fifo, { force: true })
    return
  }
  // Without the server's NODE_OPTIONS (a preloaded module could keep the relay alive, or print).
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  const relay = spawn(process.execPath, [join(__dirname, 'stderr-relay.js'), String(process.pid), fifo], { stdio: ['ignore', 'pipe', 'inherit'], env })
  closeSync(2)
  const fd = openSync(fifo, constants.O_WRONLY)
  if (fd !== 2) throw new Error(`stderr guard: the FIFO took descriptor ${fd}, not 2`)
  realStderr = real
  // Once the relay reads the FIFO (or is gone), this process stops being a reader: a relay that dies then makes
  // writes to descriptor 2 fail (EPIPE) rather than fill the FIFO and block.
  const release = (): void => {
    if (holder < 0) return
    closeSync(holder)
    holder = -1
    rmSync(fifo, { force: true })
    relay.stdout.destroy()
  }
  relay.stdout.once('data', release)
  relay.once('exit', release)
  relay.once('error', release)
  relay.unref()
  ;(relay.stdout as unknown as { unref(): void }).unref()
}
