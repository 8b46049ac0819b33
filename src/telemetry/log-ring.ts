// The log's ring: a SharedArrayBuffer through which the front thread hands
// every log line to the log's thread (src/telemetry/log-worker.ts), which formats the
// access lines and writes everything to stderr. An access line is a small
// fixed record here (time, route-and-method index, status, duration, the
// request id's counter); its text is written by the log's thread, so the
// front thread, which bounds get-node, no longer spends the ~2,000
// instructions of the line's bytes (bench/MEASUREMENTS.md, "Table:
// 2026-11-23, full settings, quiet machine, three runs", "The access log's
// cost"). pino's own lines go through the same ring as text, so stderr
// keeps the order the lines were logged in. One writer (the front thread)
// and one reader at a time: the log's thread, or the front thread once it
// has taken the ring over (that thread gone, or stuck). Every line is
// written once: the reader's position moves past a record only once its
// line is written (LineSink.idle), and the log's thread reads and writes
// only while it holds the ring (Slot.Owner), which the front thread takes
// only between two of its turns; a line the ring has no room for is
// counted (Slot.Dropped) and reported in a line of its own.
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
  /** Flushes asked for by the writer (src/telemetry/log.ts flushLog) and done by the reader. */
  FlushAsked = 4,
  FlushDone = 5,
  /** Who reads the ring (Owner). */
  Owner = 6,
  /** Of the dropped lines, those a written line has reported. */
  DropsReported = 7,
}
const enum Owner {
  /** The log's thread, between two turns: the front thread may take the ring. */
  Free = 0,
  /** The log's thread, in a turn (reading records, writing lines). */
  Reading = 1,
  /** The front thread: the log's thread reads no more. */
  Taken = 2,
}
const CONTROL_BYTES = 64

const enum Kind {
  Wrap = 1,
  /** A complete line or lines as UTF-8: [kind, bytes, length] + bytes. */
  Text = 2,
  /**
   * [kind, bytes, time (f64), fragment, status, tenths, seq, stem, given length] + the given id's bytes;
   * a fragment below 0 is -1 - the length of the fragment's own bytes, after the id's (a method whose fragments are not kept).
   */
  Access = 3,
  /** [kind, bytes, index, length] + a route-and-method fragment's bytes. */
  Fragment = 4,
  /** [kind, bytes, index, length] + a request id stem. */
  Stem = 5,
}
const ACCESS_BYTES = 40
/** The longest a sleeping reader waits without being woken (the writer's check for a sleeper is not atomic). */
const SLEEP_MS = 100
/** How often a waiting writer looks for the reader's progress. */
const PROGRESS_MS = 50

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

  /** Lines dropped so far because the ring was full (or, at an exit, stuck in it). */
  get dropped(): number {
    return Atomics.load(this.control, Slot.Dropped)
  }

  /** The reader's position: every record before it has its line written. */
  get readPosition(): number {
    return Atomics.load(this.control, Slot.Read) >>> 0
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
    let byMethod = this.fragments.get(route)
    const known = byMethod?.get(method)
    if (known !== undefined) return known
    const bytes = fragmentBytes(method, route)
    const at = this.claim(align8(16 + bytes.length))
    if (at < 0) return -1
    const index = this.fragmentCount++
    this.ints[(at >> 2) + 2] = index
    this.ints[(at >> 2) + 3] = bytes.length
    bytes.copy(this.bytes, at + 16)
    this.publish(at, Kind.Fragment, align8(16 + bytes.length))
    if (byMethod === undefined) this.fragments.set(route, (byMethod = new Map()))
    byMethod.set(method, index)
    this.fragmentList[index] = bytes
    return index
  }

  /** The stem's index, put in the ring first if it is new (false: the ring is full). */
  private stemReady(stem: Buffer): boolean {
    if (stem === this.stem) return true
    const at = this.claim(align8(16 + stem.length))
    if (at < 0) return false
    // By index, not by arrival: a reader that takes over may read again a stem it already knows.
    this.ints[(at >> 2) + 2] = this.stemCount + 1
    this.ints[(at >> 2) + 3] = stem.length
    stem.copy(this.bytes, at + 16)
    this.publish(at, Kind.Stem, align8(16 + stem.length))
    this.stem = stem
    this.stemList[++this.stemCount] = stem
    return true
  }

  /** An access line's fields, now (the line is written by the reader: RingReader); `tenths` of milliseconds. */
  access(id: RequestIdParts, method: string, route: string, status: number, tenths: number): boolean {
    // A method whose fragments are not kept (a client's own) has its fragment in the record: no state a reader must share.
    const own = isCachedMethod(method) ? undefined : fragmentBytes(method, route)
    const fragment = own === undefined ? this.fragmentIndex(method, route) : -1 - own.length
    if (own === undefined && fragment < 0) return this.drop()
    const given = id.givenId
    if (given === '' && !this.stemReady(id.idStem)) return this.drop()
    const extra = given.length + (own === undefined ? 0 : own.length)
    const need = extra === 0 ? ACCESS_BYTES : align8(ACCESS_BYTES + extra)
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
    if (own !== undefined) own.copy(this.bytes, at + ACCESS_BYTES + given.length)
    this.publish(at, Kind.Access, need)
    return true
  }

  /**
   * A reader on this thread for what the ring still holds, from the first
   * record whose line is not written yet: it knows every fragment and stem
   * the log's thread was told. For a reader that is gone (its thread ended),
   * or after seize().
   */
  readerFor(sink: LineSink): RingReader {
    Atomics.store(this.control, Slot.Owner, Owner.Taken)
    return new RingReader(this.buffer, sink, process.pid, { fragments: [...this.fragmentList], stems: [...this.stemList] })
  }

  /**
   * Takes the ring from a reader that is still there, once it is between
   * two turns (never while it writes: no line twice); undefined if it stays
   * in one with no progress for `stallMs` (stuck writing to a stderr that
   * takes nothing).
   */
  seize(sink: LineSink, stallMs: number): RingReader | undefined {
    const stall = new Stall(this, stallMs)
    for (;;) {
      if (Atomics.compareExchange(this.control, Slot.Owner, Owner.Free, Owner.Taken) !== Owner.Reading) return this.readerFor(sink)
      const wait = stall.next()
      if (wait <= 0) return undefined
      Atomics.wait(this.control, Slot.Owner, Owner.Reading, wait)
    }
  }

  /**
   * Gives up the lines a stuck reader holds (before an exit): counts them as
   * dropped and returns how many; the reader reads no more after its turn.
   */
  abandon(): number {
    Atomics.store(this.control, Slot.Owner, Owner.Taken)
    let lines = 0
    for (let r = this.readPosition; r !== this.w;) {
      const i = (r & this.mask) >> 2
      if (this.ints[i] === Kind.Access || this.ints[i] === Kind.Text) lines++
      r = (r + this.ints[i + 1]!) >>> 0
    }
    Atomics.add(this.control, Slot.Dropped, lines)
    return lines
  }

  /** Asks the reader to write out everything so far; returns the number to wait for (flushDone). */
  askFlush(): number {
    const asked = Atomics.add(this.control, Slot.FlushAsked, 1) + 1
    this.wake()
    return asked
  }

  /**
   * Waits until the reader has done flush `asked`, as long as it makes
   * progress: false once it has written nothing for `stallMs`.
   */
  waitFlushed(asked: number, stallMs: number): boolean {
    const stall = new Stall(this, stallMs)
    for (;;) {
      const done = Atomics.load(this.control, Slot.FlushDone)
      if (done - asked >= 0) return true
      const wait = stall.next()
      if (wait <= 0) return false
      Atomics.wait(this.control, Slot.FlushDone, done, wait)
    }
  }
}

/** A wait that lasts while the reader moves on: `stallMs` after the reader's last progress. */
class Stall {
  private read: number
  private deadline: number

  constructor(private readonly ring: RingWriter, private readonly stallMs: number) {
    this.read = ring.readPosition
    this.deadline = Date.now() + stallMs
  }

  /** How long to wait before looking again; 0 once the reader has stalled. */
  next(): number {
    const now = Date.now()
    const read = this.ring.readPosition
    if (read !== this.read) {
      this.read = read
      this.deadline = now + this.stallMs
    }
    return Math.max(0, Math.min(this.deadline - now, PROGRESS_MS))
  }
}

/** The fragments and stems a reader knows (by index; stem 0 is none). */
interface Known {
  fragments: Buffer[]
  stems: Buffer[]
}

/**
 * The reading side: turns records into lines in a LineSink (on the log's
 * thread, or on the front thread after it). Its position in the ring (Slot.Read)
 * moves past a record only once the sink has written the record's line.
 */
export class RingReader extends RingMemory {
  private readonly fragments: Buffer[]
  private readonly stems: Buffer[]
  /** The request id of the line being written (one object, refilled per line). */
  private readonly id: { givenId: string; idStem: Buffer; idSeq: number } = { givenId: '', idStem: Buffer.alloc(0), idSeq: 0 }
  /** Where this reader has read to (its lines in the sink, written or not). */
  private r: number
  /** The dropped lines reported in lines in the sink, written or not. */
  private droppedSeen: number
  /** Whether the last drain read every record there was. */
  caughtUp = true

  constructor(buffer: SharedArrayBuffer, private readonly sink: LineSink, private readonly pid = process.pid, known: Known = { fragments: [], stems: [Buffer.alloc(0)] }) {
    super(buffer)
    this.fragments = known.fragments
    this.stems = known.stems
    this.r = this.readPosition
    this.droppedSeen = Atomics.load(this.control, Slot.DropsReported)
  }

  get pending(): boolean {
    return Atomics.load(this.control, Slot.Write) >>> 0 !== this.r
  }

  /** The ring for a turn of the log's thread; false once the front thread has taken it. */
  acquire(): boolean {
    return Atomics.compareExchange(this.control, Slot.Owner, Owner.Free, Owner.Reading) === Owner.Free
  }

  /** The turn is over: the front thread may take the ring now. */
  release(): void {
    if (Atomics.compareExchange(this.control, Slot.Owner, Owner.Reading, Owner.Free) === Owner.Reading) Atomics.notify(this.control, Slot.Owner)
  }

  /** Reads the records published so far, up to about `maxBytes` of them, into the sink; returns how many. */
  drain(maxBytes = Infinity): number {
    const end = Atomics.load(this.control, Slot.Write) >>> 0
    let r = this.r
    let n = 0
    let taken = 0
    while (r !== end && taken < maxBytes) {
      const at = r & this.mask
      const i = at >> 2
      const kind = this.ints[i]
      const bytes = this.ints[i + 1]!
      if (kind === Kind.Text) this.sink.writeBytes(this.bytes.subarray(at + 12, at + 12 + this.ints[i + 2]!))
      else if (kind === Kind.Access) this.accessLine(at)
      else if (kind === Kind.Fragment) this.fragments[this.ints[i + 2]!] = Buffer.from(this.bytes.subarray(at + 16, at + 16 + this.ints[i + 3]!))
      else if (kind === Kind.Stem) this.stems[this.ints[i + 2]!] = Buffer.from(this.bytes.subarray(at + 16, at + 16 + this.ints[i + 3]!))
      this.r = r = (r + bytes) >>> 0
      taken += bytes
      n++
      // The sink has just written everything it held (a block filled): so far is done.
      if (this.sink.idle) this.commit()
    }
    this.caughtUp = r === end
    this.reportDrops()
    if (this.sink.idle) this.commit()
    return n
  }

  /** Writes what the sink holds, synchronously; then what was read is done. False if the sink could not write it all. */
  flush(): boolean {
    const written = this.sink.flushSync()
    if (this.sink.idle) this.commit()
    return written
  }

  /** Everything read so far has its line written (and its drops reported). */
  private commit(): void {
    Atomics.store(this.control, Slot.DropsReported, this.droppedSeen)
    Atomics.store(this.control, Slot.Read, this.r | 0)
  }

  private accessLine(at: number): void {
    const i = at >> 2
    const fragmentIndex = this.ints[i + 4]!
    const givenLength = this.ints[i + 9]!
    const own = at + ACCESS_BYTES + givenLength
    const fragment = fragmentIndex >= 0 ? this.fragments[fragmentIndex]! : this.bytes.subarray(own, own - 1 - fragmentIndex)
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
