// A shard's journal: append-only segment files in front of its LMDB
// (docs/architecture.md, "Writes: the journal"). A batch's effects are
// appended, then one fdatasync makes every record appended so far durable
// (what arrives meanwhile joins the next one). A checkpoint starts a new
// segment, waits until LMDB's own sync holds everything in the older ones,
// and removes them.
import { join } from 'node:path'
import { decodeSegment, encodeRecord, type JournalRecord } from './record'
import { syncPath } from '../../src/crypto/synced-files'
import { fileLengths, listDir, openAppend, readWhole, removeFiles, truncateTo, type AppendFile } from './journal-files'

/** A journal that cannot be trusted: the start stops with this message. */
export class JournalDamaged extends Error {}

const SEGMENT = /^(\d{16})\.log$/
const segmentName = (first: number): string => `${String(first).padStart(16, '0')}.log`

interface Segment {
  name: string
  file: AppendFile
  synced: number
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
  /** Bytes appended since the last checkpoint began. */
  private sinceCheckpoint = 0
  /** The size of the last record appended, while it can still be cut (cutLast). */
  private lastLength: number | undefined

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
    names.forEach((name, i) => {
      const path = join(dir, name)
      const decoded = decodeSegment(readWhole(path))
      const isLast = i === names.length - 1
      if (decoded.tail === 'damaged' || (decoded.tail === 'torn' && !isLast)) {
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
    return fileLengths(dir).some((f) => SEGMENT.test(f.name) && f.length > 0)
  }

  /** After the replay is in LMDB and synced: the old segments go, appends start a new one. */
  start(): void {
    const old = listDir(this.dir).filter((n) => SEGMENT.test(n))
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
    Promise.all(pending.map((s) => s.file.sync())).then(() => {
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
   * A new segment takes the appends; once `lmdbHolds()` resolves (LMDB's
   * own sync holds every record of the older segments),
   * those segments are removed. One checkpoint at a time.
   */
  checkpoint(lmdbHolds: () => Promise<void>): Promise<void> {
    this.checkpointing ??= this.runCheckpoint(lmdbHolds).finally(() => { this.checkpointing = undefined })
    return this.checkpointing
  }

  private async runCheckpoint(lmdbHolds: () => Promise<void>): Promise<void> {
    const last = this.position
    const older = this.segments.length
    if (this.segments[older - 1]!.file.length > 0) this.openSegment()
    this.sinceCheckpoint = 0
    await this.durable(last)
    await lmdbHolds()
    const gone = this.segments.splice(0, this.segments.length - 1)
    for (const s of gone) s.file.close()
    removeFiles(this.dir, gone.map((s) => s.name))
  }

  private openSegment(): void {
    const name = segmentName(this.position + 1)
    this.segments.push({ name, file: openAppend(join(this.dir, name)), synced: 0 })
    this.lastLength = undefined
    // The new file's directory entry must survive a power loss before anything in it counts.
    syncPath(this.dir)
  }

  /** Closes the files (after a last checkpoint on a clean stop). */
  close(): void {
    for (const s of this.segments.splice(0)) s.file.close()
  }
}
