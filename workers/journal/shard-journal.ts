// A shard's journal: append-only segment files in front of its LMDB
// (docs/design/architecture.md, "Writes: the journal"). A batch's effects are
// appended, then one fdatasync makes every record appended so far durable
// (what arrives meanwhile joins the next one). Segments are preallocated
// (zeros, synced, made ahead of need), so that a sync writes only data. A
// checkpoint waits until LMDB's own sync holds every record so far; one that
// rotates also starts a new segment first and then removes the older ones.
import { renameSync } from 'node:fs'
import { join } from 'node:path'
import { decodeSegment, encodeRecord, type JournalRecord } from './record'
import { fileLengths, freeBytes, listDir, openAppend, preallocate, readWhole, removeFiles, removeFilesAsync, syncDirAsync, truncateTo, type AppendFile } from './journal-files'

/** A shard's journal directory. */
export const journalDir = (shardDir: string): string => join(shardDir, 'journal')

/** A journal that cannot be trusted: the start stops with this message. */
export class JournalDamaged extends Error {}

const SEGMENT = /^(\d{16})\.log$/
/** The next segment, preallocated. */
const SPARE = 'next-segment'
/** Bytes a segment is preallocated to; one that outgrows it goes on growing the file. */
export const SEGMENT_BYTES = Number(process.env.JOURNAL_SEGMENT_BYTES ?? 4 * 1024 * 1024)
/** A segment is preallocated only while the disk has this many times its size free. */
const SPARE_ROOM = 64
const segmentName = (first: number): string => `${String(first).padStart(16, '0')}.log`

interface Segment {
  name: string
  file: AppendFile
  synced: number
  /** Made from the preallocated spare (its syncs write only data). */
  preallocated: boolean
  /** Its directory entry made durable: a sync of its records counts only once this is done too. */
  entry: Promise<void>
}

export class ShardJournal {
  /** Open segments, oldest first; the last takes the appends. */
  private readonly segments: Segment[] = []
  private position: number
  private durableThrough: number
  private syncing = false
  private readonly waiters: { position: number; resolve: () => void; reject: (err: unknown) => void }[] = []
  private failed: unknown
  private checkpointing: Promise<void> | undefined
  private nextCheckpoint: { rotate: boolean; done: Promise<void> } | undefined
  /** Bytes appended since the last checkpoint began. */
  private sinceCheckpoint = 0
  /** The size of the last record appended, while it can still be cut (cutLast). */
  private lastLength: number | undefined
  /** The next segment's preallocation: done, under way, or not begun. */
  private spare: 'ready' | 'preparing' | undefined
  /** fdatasyncs and bytes appended so far (the actor's stats report them). */
  syncCount = 0
  bytesAppended = 0

  private constructor(readonly dir: string, position: number) {
    this.position = position
    this.durableThrough = position
  }

  /**
   * Reads the journal in `dir`: a torn tail of the last segment is cut, a
   * damaged record before it is a JournalDamaged. Returns the records after
   * `applied` (the position the shard's LMDB holds), in order, to replay;
   * then start() takes appends.
   */
  static read(dir: string, applied: number): { journal: ShardJournal; replay: JournalRecord[] } {
    const names = listDir(dir).filter((n) => SEGMENT.test(n)).sort()
    let last = applied
    const replay: JournalRecord[] = []
    const segments = names.map((name) => ({ path: join(dir, name), decoded: decodeSegment(readWhole(join(dir, name))) }))
    // A power loss may tear the last record of the newest segment that holds any (a checkpoint may have begun
    // an empty one after it); damage, or a tear with records after it, is not a power loss.
    const lastHolding = segments.reduce((found, s, i) => (s.decoded.records.length > 0 || s.decoded.tail !== 'clean' ? i : found), -1)
    segments.forEach(({ path, decoded }, i) => {
      if (decoded.tail === 'damaged' || (decoded.tail === 'torn' && i < lastHolding)) {
        throw new JournalDamaged(`journal segment ${path} is damaged at byte ${decoded.goodLength}; restore this shard from a backup`)
      }
      if (decoded.tail === 'torn') truncateTo(path, decoded.goodLength)
      for (const record of decoded.records) {
        if (record.position <= applied) continue
        if (record.position !== last + 1) {
          throw new JournalDamaged(`journal ${dir} holds position ${record.position} after ${last}: records in between are missing; restore this shard from a backup`)
        }
        replay.push(record)
        last = record.position
      }
    })
    return { journal: new ShardJournal(dir, last), replay }
  }

  /** Whether the journal in `dir` holds any record: its shard was not stopped cleanly (a clean stop leaves an empty segment). */
  static holdsRecords(dir: string): boolean {
    return fileLengths(dir).some((f) => {
      if (!SEGMENT.test(f.name) || f.length === 0) return false
      // A preallocated segment is zeros until written.
      const decoded = decodeSegment(readWhole(join(dir, f.name)))
      return decoded.records.length > 0 || decoded.tail !== 'clean'
    })
  }

  /** After the replay is in LMDB and synced: the old segments go, appends start a new one. */
  start(): void {
    const old = listDir(this.dir).filter((n) => SEGMENT.test(n) || n === SPARE)
    // Removed first: the new segment may take an old one's name (an empty segment a checkpoint had begun).
    if (old.length > 0) removeFiles(this.dir, old)
    this.openSegment()
  }

  /** Appends a record (to the page cache); its position. durable(position) says when it is on the disk. */
  append(payload: Uint8Array): number {
    if (this.failed !== undefined) throw this.failed
    const position = this.position + 1
    const bytes = encodeRecord(position, payload)
    this.segments[this.segments.length - 1]!.file.append(bytes)
    this.position = position
    this.lastLength = bytes.length
    this.sinceCheckpoint += bytes.length
    this.bytesAppended += bytes.length
    return position
  }

  /**
   * Removes the record at `position` if it is the last one appended and not
   * yet durable (a batch whose commit failed); false when it cannot be cut.
   */
  cutLast(position: number): boolean {
    const segment = this.segments[this.segments.length - 1]!
    // While an fdatasync runs, its bookkeeping may already count these bytes: a cancel record instead.
    if (position !== this.position || position <= this.durableThrough || this.lastLength === undefined || this.syncing) return false
    segment.file.cutTo(segment.file.length - this.lastLength)
    this.position--
    this.sinceCheckpoint -= this.lastLength
    this.lastLength = undefined
    return true
  }

  get lastPosition(): number {
    return this.position
  }

  get bytesSinceCheckpoint(): number {
    return this.sinceCheckpoint
  }

  /** Resolves once the record at `position` (and all before it) is on the disk. */
  durable(position: number): Promise<void> {
    if (position <= this.durableThrough) return Promise.resolve()
    if (this.failed !== undefined) return Promise.reject(this.failed)
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ position, resolve, reject }))
    this.syncRound()
    return done
  }

  /** One fdatasync per segment with unsynced bytes covers every record appended before it began. */
  private syncRound(): void {
    if (this.syncing || this.waiters.length === 0) return
    this.syncing = true
    const through = this.position
    const pending = this.segments.filter((s) => s.file.length > s.synced)
    const lengths = pending.map((s) => s.file.length)
    this.syncCount += pending.length
    Promise.all(pending.map((s) => Promise.all([s.entry, s.file.sync()]))).then(() => {
      pending.forEach((s, i) => { s.synced = Math.max(s.synced, lengths[i]!) })
      this.durableThrough = Math.max(this.durableThrough, through)
      this.settle()
    }, (err: unknown) => {
      // A failed fdatasync leaves the page cache's state unknown (the kernel may have dropped the pages): no later append is trusted.
      this.failed = err
      this.settle()
    })
  }

  private settle(): void {
    this.syncing = false
    const waiting = this.waiters.splice(0)
    for (const w of waiting) {
      if (this.failed !== undefined) w.reject(this.failed)
      else if (w.position <= this.durableThrough) w.resolve()
      else this.waiters.push(w)
    }
    this.syncRound()
  }

  /**
   * Whether a checkpoint should start a new segment: the current one is
   * half full, or it grows as it is written (none was preallocated when it
   * began) and a preallocated one is ready.
   */
  get wantsRotation(): boolean {
    const current = this.segments[this.segments.length - 1]!
    return current.file.length >= SEGMENT_BYTES / 2 || (!current.preallocated && this.spare === 'ready' && current.file.length > 0)
  }

  /**
   * Waits until every record appended so far is durable and `lmdbHolds()`
   * resolves (LMDB's own sync holds them). With `rotate`, a new segment
   * takes the appends first, and the older ones are removed at the end. One
   * checkpoint at a time.
   */
  checkpoint(lmdbHolds: () => Promise<void>, rotate: boolean): Promise<void> {
    if (this.checkpointing === undefined) return this.beginCheckpoint(lmdbHolds, rotate)
    // The one under way began before this call: what was appended since may not be in what it holds or
    // removes, so one more follows it (one waits at most, a rotation if any of those asking wanted one).
    if (this.nextCheckpoint === undefined) {
      const next = { rotate, done: Promise.resolve() }
      next.done = this.checkpointing.catch(() => undefined).then(() => {
        this.nextCheckpoint = undefined
        return this.beginCheckpoint(lmdbHolds, next.rotate)
      })
      this.nextCheckpoint = next
    } else if (rotate) this.nextCheckpoint.rotate = true
    return this.nextCheckpoint.done
  }

  private beginCheckpoint(lmdbHolds: () => Promise<void>, rotate: boolean): Promise<void> {
    const done = this.runCheckpoint(lmdbHolds, rotate).finally(() => {
      if (this.checkpointing === done) this.checkpointing = undefined
    })
    this.checkpointing = done
    return done
  }

  private async runCheckpoint(lmdbHolds: () => Promise<void>, rotate: boolean): Promise<void> {
    const last = this.position
    if (rotate && this.segments[this.segments.length - 1]!.file.length > 0) this.openSegment()
    this.sinceCheckpoint = 0
    await this.durable(last)
    await lmdbHolds()
    if (!rotate) return
    const gone = this.segments.splice(0, this.segments.length - 1)
    for (const s of gone) s.file.close()
    await removeFilesAsync(this.dir, gone.map((s) => s.name))
  }

  private openSegment(): void {
    const name = segmentName(this.position + 1)
    // The preallocated spare when it is ready; else a file that grows as it is written (and a spare begun for the next).
    const preallocated = this.spare === 'ready'
    if (preallocated) renameSync(join(this.dir, SPARE), join(this.dir, name))
    if (this.spare !== 'preparing') this.prepareSpare()
    // The new file's directory entry must survive a power loss before anything in it counts (syncRound waits for it).
    this.segments.push({ name, file: openAppend(join(this.dir, name)), synced: 0, preallocated, entry: syncDirAsync(this.dir) })
    this.lastLength = undefined
  }

  private prepareSpare(): void {
    // Zeros ahead of need take space a nearly full disk has not got: then segments grow as they are written.
    if (freeBytes(this.dir) < SPARE_ROOM * SEGMENT_BYTES) return
    this.spare = 'preparing'
    preallocate(join(this.dir, SPARE), SEGMENT_BYTES).then(() => {
      if (this.spare === 'preparing') this.spare = 'ready'
    }, () => {
      // A full disk, say: segments grow as they are written until a later one can be made ahead.
      if (this.spare === 'preparing') this.spare = undefined
    })
  }

  /** Closes the files (after a last checkpoint on a clean stop). */
  close(): void {
    for (const s of this.segments.splice(0)) s.file.close()
  }
}
