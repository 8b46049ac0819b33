// Every line on the server's stderr is JSON, including what the log does not
// write: LMDB's C code prints to file descriptor 2 without a newline (a full
// disk), and libraries and Node itself print plain text there. The server's
// first step makes descriptor 2 a FIFO read by a relay process
// (src/telemetry/stderr-relay.ts), which writes it to the real stderr as JSON lines;
// the log and the start's `error:` line write to the real stderr, kept open
// under another descriptor (stderrFd()). Node cannot dup2, but open() takes
// the lowest free descriptor: 2, right after it is closed. A stderr that is
// a file, a pipe or a terminal is opened a second time (/proc/self/fd/2); a
// socket (systemd's journal, Node's own child_process pipes) cannot be, so
// the relay, which inherits it, hands it back over an IPC channel.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { closeSync, constants, openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

let realStderr = 2
let guarded: Promise<void> = Promise.resolve()
const movedTo: ((fd: number) => void)[] = []
/** The socket the relay handed back: kept reachable, so that collecting it never closes its descriptor. */
const keptOpen: unknown[] = []
/** How long a start waits for the relay to hand back a socket stderr (a loaded machine starts a process slowly). */
const HANDBACK_MS = 15_000

/** Where the log and the start's error line go: the real stderr. */
export function stderrFd(): number {
  return realStderr
}

/** `use` is called if the real stderr moves to another descriptor (a socket, once the relay handed it back). */
export function onStderrMoved(use: (fd: number) => void): void {
  movedTo.push(use)
}

/** Resolves once descriptor 2 is the relay's FIFO, or the guard gave up; the server awaits it before starting any thread. */
export function stderrGuarded(): Promise<void> {
  return guarded
}

/**
 * Called once, first thing, by the server (before any thread or file is
 * opened). Where no FIFO can be made, or a socket stderr is not handed back,
 * stderr stays as it is.
 */
export function guardStderr(): void {
  let real: number | undefined
  try {
    real = openSync('/proc/self/fd/2', constants.O_WRONLY | constants.O_APPEND)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENXIO') return
  }
  const fifo = join(tmpdir(), `graph-stderr-${process.pid}-${randomBytes(6).toString('hex')}`)
  let holder: number
  let writer: number
  try {
    execFileSync('mkfifo', ['-m', '600', fifo])
    // Read and write: a FIFO opened so never blocks, and holds what is written until the relay reads it.
    holder = openSync(fifo, constants.O_RDWR)
    // The write end, open now (the relay removes the FIFO's name once it reads): descriptor 2 becomes a copy of it.
    writer = openSync(fifo, constants.O_WRONLY)
  } catch {
    if (real !== undefined) closeSync(real)
    rmSync(fifo, { force: true })
    return
  }
  // Without the server's NODE_OPTIONS (a preloaded module slows the relay's start, could keep it alive or
  // print), through env(1): a module that hooks spawn may put them back into the environment it is given.
  const relay = spawn('env', ['-u', 'NODE_OPTIONS', process.execPath, join(__dirname, 'stderr-relay.js'), String(process.pid), fifo], {
    stdio: ['ignore', 'pipe', 'inherit', ...(real === undefined ? ['ipc' as const] : [])],
  })
  // Once the relay reads the FIFO (or is gone), this process stops being a reader: a relay that dies then makes
  // writes to descriptor 2 fail (EPIPE) rather than fill the FIFO and block.
  const release = (): void => {
    if (holder < 0) return
    closeSync(holder)
    holder = -1
    rmSync(fifo, { force: true })
    relay.stdout?.destroy()
  }
  relay.stdout?.once('data', release)
  relay.once('exit', release)
  relay.once('error', release)
  relay.unref()
  ;(relay.stdout as unknown as { unref(): void }).unref()
  if (real !== undefined) {
    moveDescriptor2(writer)
    realStderr = real
    return
  }
  guarded = takeSocketBack(relay, writer, () => {
    closeSync(writer)
    release()
    relay.kill('SIGKILL')
  })
}

/** Descriptor 2 becomes the FIFO's write end (opened again through /proc: a FIFO can be), and `writer` is closed. */
function moveDescriptor2(writer: number): void {
  closeSync(2)
  const fd = openSync(`/proc/self/fd/${writer}`, constants.O_WRONLY)
  closeSync(writer)
  if (fd !== 2) throw new Error(`stderr guard: the FIFO took descriptor ${fd}, not 2`)
}

function takeSocketBack(relay: ChildProcess, writer: number, giveUp: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    // Settled once: a hand-back that comes after the guard gave up must not move descriptor 2 any more (the
    // writer is closed by then, and its number may be another file's: closing that under libuv aborts the process).
    let settled = false
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      giveUp()
      resolve()
    }, HANDBACK_MS)
    relay.once('message', (_message: unknown, handle: unknown) => {
      if (settled) {
        (handle as { destroy?(): void } | undefined)?.destroy?.()
        return
      }
      settled = true
      clearTimeout(timer)
      const socket = handle as { _handle?: { fd?: number }; unref?(): void; pause?(): void; on?(event: string, listener: () => void): void } | undefined
      // Only written to, by descriptor: never read, and its errors are the writes' own.
      socket?.pause?.()
      socket?.on?.('error', () => undefined)
      const fd = socket?._handle?.fd
      relay.disconnect()
      if (typeof fd !== 'number' || fd < 0) {
        giveUp()
        resolve()
        return
      }
      keptOpen.push(socket)
      socket?.unref?.()
      moveDescriptor2(writer)
      realStderr = fd
      for (const use of movedTo) use(fd)
      resolve()
    })
  })
}
