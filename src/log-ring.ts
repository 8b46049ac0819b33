// The log's ring: a SharedArrayBuffer through which the front thread hands
// every log line to the log's thread (src/log-worker.ts), which formats the
// access lines and writes everything to stderr. An access line is a small
// fixed record here (time, route-and-method index, status, duration, the
// request id's counter); its text is written by the log's thread, so the
// front thread, which bounds get-node, no longer spends the ~2,000
// instructions of the line's bytes (bench/README.md, "The access log's
// cost"). pino's own lines go through the same ring as text, so stderr
// keeps the order the lines were logged in. One writer (the front thread)
// and one reader (the log's thread, or the front thread once that one is gone).
//
// Positions are byte counters that wrap at 2^32 (the ring's size divides
// that); a record never straddles the end: a WRAP record fills the tail.
// Records are 8-byte aligned: [kind, bytes] then the kind's fields.
import { encodeAccessLine, accessLineRoom, fragmentBytes, isCachedMethod } from './access-line'
import type { LineSink } from './line-sink'
import type { RequestIdParts } from './request-id'

// Atomics.waitAsync (Node 16+) is in the ES2024 library, past this project's ES2022.
declare global {
  interface Atomics {
    waitAsync(array: Int32Array, index: number, value: number, timeoutMs?: number): { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> }
  }
}

const enum Slot {
  /** The writer's position (bytes ever written, mod 2^32). */
  Write = 0,
  /** The reader's position. */
  Read = 1,
  /** 1 while the reader waits to be woken (Atomics.waitAsync). */
  Sleeping = 2,
  /** Lines dropped because the ring was full, ever. */
  Dropped = 3,
  /** Flushes asked for by the writer (src/log.ts flushLog) and done by the reader. */
  FlushAsked = 4,
  FlushDone = 5,
}
const CONTROL_BYTES = 64

const enum Kind {
  Wrap = 1,
  /** A complete line or lines as UTF-8: [kind, bytes, length] + bytes. */
  Text = 2,
  /** [kind, bytes, time (f64), fragment, status, tenths, seq, stem, given length] + the given id's bytes. */
  Access = 3,
  /** A route-and-method fragment's bytes under an index (-1: for the next access line only). */
  Fragment = 4,
  /** A request id stem under an index. */
  Stem = 5,
}
const ACCESS_BYTES = 40
/** The longest a sleeping reader waits without being woken (the writer's check for a sleeper is not atomic). */
const SLEEP_MS = 100
const ONE_OFF = -1

export const DEFAULT_RING_BYTES = 4 * 1024 * 1024

/** A new ring's memory: `bytes` of records (a power of two) after the control words. */
export function newRingBuffer(bytes = DEFAULT_RING_BYTES): SharedArrayBuffer {
  if (bytes < 1024 || (bytes & (bytes - 1)) !== 0) throw new Error(`the log ring's size must be a power of two of at least 1024 bytes, not ${bytes}`)
  return new SharedArrayBuffer(CONTROL_BYTES + bytes)
}

const align8 = (n: number): number => (n + 7) & ~7

/** The views both sides use. */
class RingMemory {
  readonly control: Int32Array
  readonly ints: Int32Array
  readonly floats: Float64Array
  readonly bytes: Buffer
  readonly size: number
  readonly mask: number

  constructor(readonly buffer: SharedArrayBuffer) {
    this.size = buffer.byteLength - CONTROL_BYTES
    this.mask = this.size - 1
    this.control = new Int32Array(buffer, 0, CONTROL_BYTES / 4)
    this.ints = new Int32Array(buffer, CONTROL_BYTES)
    this.floats = new Float64Array(buffer, CONTROL_BYTES)
    this.bytes = Buffer.from(buffer, CONTROL_BYTES, this.size)
  }

  /** Lines dropped so far because the ring was full. */
  get dropped(): number {
    return Atomics.load(this.control, Slot.Dropped)
  }
}

/** The front thread's side: records in, never blocking; a record that does not fit is dropped and counted. */
export class RingWriter extends RingMemory {
  private w = 0
  /** The reader's position when last looked at: the free room it gives can only be less than the true one. */
  private r = 0
  /** route -> method -> fragment index, of the fragments already in the ring. */
  private readonly fragments = new Map<string, Map<string, number>>()
  private fragmentCount = 0
  private stem: Buffer | undefined
  private stemCount = 0
  /** What the reader has been told, kept for a reader that takes over (readerFor). */
  private readonly fragmentList: Buffer[] = []
  private readonly stemList: Buffer[] = [Buffer.alloc(0)]
  private oneOff: Buffer = Buffer.alloc(0)

  /** `now`: the clock of the access lines' time (tests set it). */
  constructor(buffer: SharedArrayBuffer, private readonly now: () => number = Date.now) {
    super(buffer)
  }

  /** Room for `need` bytes (8-aligned) from the returned offset, or -1 if the ring is full. */
  private claim(need: number): number {
    const at = this.w & this.mask
    const tail = this.size - at
    const room = need <= tail ? need : tail + need
    // The reader's position is read (an atomic load, a call into the runtime) only when the last one seen is not enough.
    if (room > this.size - ((this.w - this.r) >>> 0)) {
      this.r = Atomics.load(this.control, Slot.Read) >>> 0
      if (room > this.size - ((this.w - this.r) >>> 0)) return -1
    }
    if (need <= tail) return at
    // The record starts again at 0; the reader skips the tail (published with the record).
    this.ints[at >> 2] = Kind.Wrap
    this.ints[(at >> 2) + 1] = tail
    this.w = (this.w + tail) >>> 0
    return 0
  }

  private publish(at: number, kind: Kind, bytes: number): void {
    this.ints[at >> 2] = kind
    this.ints[(at >> 2) + 1] = bytes
    this.w = (this.w + bytes) >>> 0
    Atomics.store(this.control, Slot.Write, this.w | 0)
    // A plain read: a wake missed through a stale 0 only delays the lines until the reader's timeout (SLEEP_MS).
    if (this.control[Slot.Sleeping] === 1) this.wake()
  }

  private drop(): false {
    Atomics.add(this.control, Slot.Dropped, 1)
    return false
  }

  /** Wakes the reader if it sleeps. */
  wake(): void {
    if (Atomics.compareExchange(this.control, Slot.Sleeping, 1, 0) === 1) Atomics.notify(this.control, Slot.Sleeping)
  }

  /** One or more complete lines (pino's). */
  text(line: string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; a long line is measured rather than over-claimed.
    const worst = line.length * 3
    const length = worst > 4096 ? Buffer.byteLength(line) : worst
    const at = this.claim(align8(12 + length))
    if (at < 0) return this.drop()
    const written = this.bytes.write(line, at + 12)
    this.ints[(at >> 2) + 2] = written
    this.publish(at, Kind.Text, align8(12 + written))
    return true
  }

  /** The fragment's index, its bytes put in the ring first if they are not there yet (-1: the ring is full). */
  private fragmentIndex(method: string, route: string): number {
    const cached = isCachedMethod(method)
    let byMethod = this.fragments.get(route)
    const known = byMethod?.get(method)
    if (known !== undefined) return known
    const bytes = fragmentBytes(method, route)
    const at = this.claim(align8(16 + bytes.length))
    if (at < 0) return -2
    const index = cached ? this.fragmentCount++ : ONE_OFF
    this.ints[(at >> 2) + 2] = index
    this.ints[(at >> 2) + 3] = bytes.length
    bytes.copy(this.bytes, at + 16)
    this.publish(at, Kind.Fragment, align8(16 + bytes.length))
    if (cached) {
      if (byMethod === undefined) this.fragments.set(route, (byMethod = new Map()))
      byMethod.set(method, index)
      this.fragmentList[index] = bytes
    } else this.oneOff = bytes
    return index
  }

  /** The stem's index, put in the ring first if it is new (false: the ring is full). */
  private stemReady(stem: Buffer): boolean {
    if (stem === this.stem) return true
    const at = this.claim(align8(12 + stem.length))
    if (at < 0) return false
    this.ints[(at >> 2) + 2] = stem.length
    stem.copy(this.bytes, at + 12)
    this.publish(at, Kind.Stem, align8(12 + stem.length))
    this.stem = stem
    this.stemCount++
    this.stemList.push(stem)
    return true
  }

  /** An access line's fields, now (the line is written by the reader: RingReader); `tenths` of milliseconds. */
  access(id: RequestIdParts, method: string, route: string, status: number, tenths: number): boolean {
    const fragment = this.fragmentIndex(method, route)
    if (fragment === -2) return this.drop()
    const given = id.givenId
    if (given === '' && !this.stemReady(id.idStem)) return this.drop()
    const need = given === '' ? ACCESS_BYTES : align8(ACCESS_BYTES + given.length)
    const at = this.claim(need)
    if (at < 0) return this.drop()
    const i = at >> 2
    this.floats[(at >> 3) + 1] = this.now()
    this.ints[i + 4] = fragment
    this.ints[i + 5] = status
    this.ints[i + 6] = tenths
    this.ints[i + 7] = id.idSeq
    this.ints[i + 8] = this.stemCount
    this.ints[i + 9] = given.length
    if (given !== '') this.bytes.write(given, at + ACCESS_BYTES, 'latin1')
    this.publish(at, Kind.Access, need)
    return true
  }

  /**
   * A reader on this thread for what the ring still holds, when the log's
   * thread is gone: it knows every fragment and stem that thread was told.
   */
  readerFor(sink: LineSink): RingReader {
    return new RingReader(this.buffer, sink, process.pid, { fragments: [...this.fragmentList], stems: [...this.stemList], oneOff: this.oneOff })
  }

  /** Asks the reader to write out everything so far; returns the number to wait for (flushDone). */
  askFlush(): number {
    const asked = Atomics.add(this.control, Slot.FlushAsked, 1) + 1
    this.wake()
    return asked
  }

  /** Waits, up to `ms`, until the reader has done flush `asked`. */
  waitFlushed(asked: number, ms: number): boolean {
    const deadline = Date.now() + ms
    for (;;) {
      const done = Atomics.load(this.control, Slot.FlushDone)
      if (done - asked >= 0) return true
      const left = deadline - Date.now()
      if (left <= 0) return false
      Atomics.wait(this.control, Slot.FlushDone, done, left)
    }
  }
}

/** The fragments and stems a reader knows (by index; stem 0 is none). */
interface Known {
  fragments: Buffer[]
  stems: Buffer[]
  oneOff: Buffer
}

/** The reading side: turns records into lines in a LineSink (on the log's thread, or on the front thread after it). */
export class RingReader extends RingMemory {
  private readonly fragments: Buffer[]
  private oneOff: Buffer
  private readonly stems: Buffer[]
  /** The request id of the line being written (one object, refilled per line). */
  private readonly id: { givenId: string; idStem: Buffer; idSeq: number } = { givenId: '', idStem: Buffer.alloc(0), idSeq: 0 }
  private droppedSeen = 0

  constructor(buffer: SharedArrayBuffer, private readonly sink: LineSink, private readonly pid = process.pid, known: Known = { fragments: [], stems: [Buffer.alloc(0)], oneOff: Buffer.alloc(0) }) {
    super(buffer)
    this.fragments = known.fragments
    this.stems = known.stems
    this.oneOff = known.oneOff
  }

  get pending(): boolean {
    return Atomics.load(this.control, Slot.Write) !== Atomics.load(this.control, Slot.Read)
  }

  /** Writes every record published so far into the sink; returns how many. */
  drain(): number {
    const end = Atomics.load(this.control, Slot.Write) >>> 0
    let r = Atomics.load(this.control, Slot.Read) >>> 0
    let n = 0
    while (r !== end) {
      const at = r & this.mask
      const i = at >> 2
      const kind = this.ints[i]
      const bytes = this.ints[i + 1]!
      if (kind === Kind.Text) this.sink.writeBytes(this.bytes.subarray(at + 12, at + 12 + this.ints[i + 2]!))
      else if (kind === Kind.Access) this.accessLine(at)
      else if (kind === Kind.Fragment) {
        const fragment = Buffer.from(this.bytes.subarray(at + 16, at + 16 + this.ints[i + 3]!))
        if (this.ints[i + 2] === ONE_OFF) this.oneOff = fragment
        else this.fragments[this.ints[i + 2]!] = fragment
      } else if (kind === Kind.Stem) this.stems.push(Buffer.from(this.bytes.subarray(at + 12, at + 12 + this.ints[i + 2]!)))
      r = (r + bytes) >>> 0
      n++
    }
    Atomics.store(this.control, Slot.Read, r | 0)
    this.reportDrops()
    return n
  }

  private accessLine(at: number): void {
    const i = at >> 2
    const fragmentIndex = this.ints[i + 4]!
    const fragment = fragmentIndex === ONE_OFF ? this.oneOff : this.fragments[fragmentIndex]!
    const givenLength = this.ints[i + 9]!
    const id = this.id
    id.givenId = givenLength === 0 ? '' : this.bytes.toString('latin1', at + ACCESS_BYTES, at + ACCESS_BYTES + givenLength)
    id.idSeq = this.ints[i + 7]!
    id.idStem = this.stems[this.ints[i + 8]!]!
    const buf = this.sink.room(accessLineRoom(id, fragment))
    this.sink.commit(encodeAccessLine(buf, this.sink.offset, this.floats[(at >> 3) + 1]!, id, fragment, this.ints[i + 5]!, this.ints[i + 6]! / 10))
  }

  /** A warn line (as pino writes one) when lines were dropped since the last. */
  private reportDrops(): void {
    const dropped = Atomics.load(this.control, Slot.Dropped)
    if (dropped === this.droppedSeen) return
    const lost = dropped - this.droppedSeen
    this.droppedSeen = dropped
    this.sink.write(`{"level":40,"time":${Date.now()},"pid":${this.pid},"dropped":${lost},"msg":"log: ${lost} lines dropped: the log's ring was full"}\n`)
  }

  /** Flushes asked for so far (a counter: the reader handles each new value once). */
  get flushAsked(): number {
    return Atomics.load(this.control, Slot.FlushAsked)
  }

  flushDone(asked: number): void {
    Atomics.store(this.control, Slot.FlushDone, asked)
    Atomics.notify(this.control, Slot.FlushDone)
  }

  /**
   * A promise settled when the writer wakes the reader, or undefined when
   * there is work already (lines, or a flush newer than `flushHandled`).
   * drain() next, either way.
   */
  sleep(flushHandled: number): Promise<void> | undefined {
    Atomics.store(this.control, Slot.Sleeping, 1)
    if (this.pending || this.flushAsked !== flushHandled) {
      Atomics.store(this.control, Slot.Sleeping, 0)
      return undefined
    }
    const waited = Atomics.waitAsync(this.control, Slot.Sleeping, 1, SLEEP_MS)
    return waited.async ? waited.value.then(() => undefined) : undefined
  }
}
