// The log's destination: JSON lines copied into large preallocated buffers
// and written to a file descriptor asynchronously, a block at a time. It
// replaces pino.destination (sonic-boom) because that one costs ~2 µs per
// line at an access line per request: it measures the whole pending string's
// byte length on every write and copies it again after every block
// (bench/MEASUREMENTS.md, "Table: 2026-11-23, full settings, quiet machine,
// three runs", "The access log's cost"). One sink takes every line
// (pino's and the preformatted access lines) in call order, so their order
// on stderr is the order they were written in.
import { write, writeSync } from 'node:fs'

/** Bytes per buffer; a line longer than a third of it is written as its own block. */
const BLOCK = 64 * 1024
/** Worst case of UTF-8 bytes per UTF-16 unit (a surrogate pair is 4 bytes for 2 units). */
const MAX_BYTES_PER_UNIT = 3
/** How long to wait before writing again after EAGAIN (a non-blocking pipe that is full). */
const RETRY_MS = 10
/** flushSync's patience with a full pipe: this many 1 ms pauses in a row with nothing written. */
const SYNC_RETRIES = 2000
const PAUSE = new Int32Array(new SharedArrayBuffer(4))

interface Block {
  bytes: Buffer
  /** Written so far (a write can be partial). */
  done: number
}

export class LineSink {
  private current: Buffer = Buffer.allocUnsafe(BLOCK)
  private used = 0
  private readonly queue: Block[] = []
  private inFlight: Block | undefined
  private readonly spare: Buffer[] = []

  /**
   * `minWrite`: bytes gathered before a write is started (the timer of the
   * caller flushes less). `synchronous`: every write is a writeSync (for the
   * log's own thread, src/telemetry/log-worker.ts, which may wait for stderr: then
   * nothing is in flight when it ends, and a stuck stderr cannot make its
   * memory grow). `patience`: flushSync's 1 ms pauses in a row on a full
   * pipe before it gives up (Infinity for the log's thread, which has nothing
   * better to do).
   */
  constructor(private fd: number, private readonly minWrite = 16 * 1024, private synchronous = false, private readonly patience = SYNC_RETRIES) {}

  /** Writes go to `fd` from now on (the real stderr moved: src/telemetry/stderr-guard.ts). */
  useFd(fd: number): void {
    this.fd = fd
  }

  /** Nothing gathered or being written: every line given so far is written (or, stderr closed, dropped). */
  get idle(): boolean {
    return this.used === 0 && this.queue.length === 0 && this.inFlight === undefined
  }

  /**
   * Every write synchronous from now on (src/telemetry/log.ts, when the log's thread is
   * gone: an asynchronous write still under way when flushSync writes at an
   * exit would interleave with it).
   */
  writeSynchronously(): void {
    this.synchronous = true
  }

  /** pino's DestinationStream: one or more complete lines. */
  write(line: string): void {
    const worst = line.length * MAX_BYTES_PER_UNIT
    if (worst > BLOCK - this.used) {
      this.seal()
      if (worst > BLOCK) this.queue.push({ bytes: Buffer.from(line), done: 0 })
    }
    if (worst <= BLOCK) this.used += this.current.write(line, this.used)
    if (this.inFlight === undefined && (this.used >= this.minWrite || this.queue.length > 0)) this.next()
  }

  /** Complete lines as UTF-8 bytes (copied: the caller may reuse them). */
  writeBytes(bytes: Uint8Array): void {
    this.room(bytes.length).set(bytes, this.used)
    this.commit(this.used + bytes.length)
  }

  /** Where the next line starts in the buffer room() returns. */
  get offset(): number {
    return this.used
  }

  /**
   * The current buffer, with room for `bytes` more from `offset`: for a line
   * encoded in place (src/telemetry/access-line.ts), then commit()ed.
   */
  room(bytes: number): Buffer {
    if (bytes > BLOCK - this.used) {
      this.seal()
      if (bytes > BLOCK) this.current = Buffer.allocUnsafe(bytes)
    }
    return this.current
  }

  /** The line encoded into room()'s buffer ends at `end`. */
  commit(end: number): void {
    this.used = end
    if (this.inFlight === undefined && this.used >= this.minWrite) this.next()
  }

  /**
   * Writes what is gathered, now or once the write under way is done (called
   * by a timer, so that a quiet server's lines go out).
   */
  flush(): void {
    this.seal()
    if (this.inFlight === undefined) this.next()
  }

  /**
   * Writes everything gathered synchronously (before process.exit, which
   * skips the asynchronous writes); false if a full pipe took nothing for
   * ~2 s (`patience`; what is left stays queued). A block whose asynchronous
   * write is under way is left to it, as sonic-boom does.
   */
  flushSync(): boolean {
    this.seal()
    let busy = 0
    for (let block = this.queue[0]; block !== undefined; block = this.queue[0]) {
      while (block.done < block.bytes.length) {
        try {
          block.done += writeSync(this.fd, block.bytes, block.done)
          busy = 0
        } catch (err) {
          // A full non-blocking pipe: wait for its reader while it reads, a bounded time without (an exit must not hang on it).
          if (!isBusy(err)) block.done = block.bytes.length // stderr closed: dropped, as the asynchronous write does
          else if (++busy > this.patience) return false
          else Atomics.wait(PAUSE, 0, 0, 1)
        }
      }
      this.queue.shift()
      this.recycle(block.bytes)
    }
    return true
  }

  /** Moves the current buffer's lines to the queue and takes a fresh buffer. */
  private seal(): void {
    if (this.used === 0) return
    this.queue.push({ bytes: this.current.subarray(0, this.used), done: 0 })
    this.current = this.spare.pop() ?? Buffer.allocUnsafe(BLOCK)
    this.used = 0
  }

  private next(): void {
    if (this.synchronous) {
      this.flushSync()
      return
    }
    if (this.queue.length === 0) this.seal()
    const block = this.queue.shift()
    if (block === undefined) return
    this.inFlight = block
    this.send(block)
  }

  /** Keeps up to two written buffers for reuse (a buffer of its own, not a long line's). */
  private recycle(bytes: Buffer): void {
    if (bytes.byteOffset === 0 && bytes.buffer.byteLength === BLOCK && this.spare.length < 2) this.spare.push(Buffer.from(bytes.buffer, 0, BLOCK))
  }

  private send(block: Block): void {
    write(this.fd, block.bytes, block.done, block.bytes.length - block.done, null, (err, n) => {
      if (err !== null && isBusy(err)) {
        setTimeout(() => this.send(block), RETRY_MS)
        return
      }
      // Any other error (stderr closed) drops the block: a log line is not worth stopping the server for.
      if (err === null && (block.done += n) < block.bytes.length) {
        this.send(block)
        return
      }
      this.inFlight = undefined
      this.recycle(block.bytes)
      if (this.queue.length > 0 || this.used >= this.minWrite) this.next()
    })
  }
}

function isBusy(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'EAGAIN' || code === 'EBUSY'
}
