// One replicated unit's snapshots (a shard's or the auth store's;
// docs/design/replication.md, "Snapshots"), both sides:
//
// - The owner, on its lease beat: when `everyEntries` stream entries or
//   `everyMs` have passed since the newest snapshot (and something was
//   written since), it copies the unit (its SnapshotSource), uploads it
//   (snapshot-store.ts), lists it keeping the newest `keep`, and then purges
//   the unit's stream below the oldest kept snapshot: every entry a host
//   still needs is either in a kept snapshot or after it in the stream.
// - A standby about to follow the stream: when what it applied is below the
//   stream's first sequence (purged past it), or it has nothing yet and a
//   snapshot exists, it restores the newest snapshot the stream continues
//   and follows from there.
import { rmSync } from 'node:fs'
import type { SnapshotOptions } from '../config/cluster-options'
import type { SnapshotInfo, SnapshotStore, SnapshotUnit } from './snapshot-store'
import type { StreamLog } from './stream-log'

export interface SnapshotHost {
  nodeId: string
  warn(message: string, err?: unknown): void
  info(message: string): void
}

/** What a unit's snapshot is made of, on this host (a shard: workers/actor/replication/snapshot-files.ts; the auth store: src/cluster/auth-snapshots.ts). */
export interface SnapshotSource {
  unit: SnapshotUnit
  /** For log lines: "shard 3", "the auth store". */
  name: string
  /** The files of a copy, in upload order. */
  files: readonly string[]
  /** A new empty scratch directory for a copy going out or coming in (outside what the start-up check walks). */
  scratch(use: 'out' | 'in'): string
  /** Copies the unit into `dir` while it keeps serving; returns the stream sequence the copy holds. */
  copy(dir: string): Promise<number>
  /** Puts the copy in `dir` in place of what this host holds; returns its sequence, and the key slots it shows destroyed that this host still held. */
  restore(dir: string): Promise<{ sequence: number; destroyed: number[] }>
}

export class Snapshots {
  /** The newest listed snapshot's sequence and when it was taken (wall clock: it may come from another host); undefined until read. */
  private newest: { sequence: number; at: number } | undefined
  private running = false

  constructor(
    private readonly source: SnapshotSource,
    private readonly log: Pick<StreamLog, 'bounds' | 'purgeBelow'>,
    private readonly snapshots: SnapshotStore,
    private readonly options: SnapshotOptions,
    private readonly host: SnapshotHost,
  ) {}

  private get unit(): SnapshotUnit {
    return this.source.unit
  }

  /**
   * The owner's beat: starts a snapshot in the background when one is due.
   * `stillServing` is asked again before the snapshot is listed, so a host
   * that lost the unit meanwhile does not list it (the index's
   * compare-and-set also refuses a list changed since it was read).
   */
  tick(applied: number, epoch: number, stillServing: () => boolean): void {
    if (this.running) return
    const newest = this.newest
    if (newest !== undefined) {
      const entries = applied - newest.sequence
      if (entries <= 0 || (entries < this.options.everyEntries && Date.now() - newest.at < this.options.everyMs)) return
    }
    this.running = true
    const work = newest === undefined ? this.readNewest() : this.take(epoch, stillServing)
    void work.catch((err: unknown) => this.host.warn(`cluster: ${this.source.name}: no snapshot this time`, err)).finally(() => { this.running = false })
  }

  private async readNewest(): Promise<void> {
    const last = (await this.snapshots.index(this.unit)).snapshots.at(-1)
    // None yet: count from the stream's start, and from now for the interval.
    this.newest = last === undefined ? { sequence: 0, at: Date.now() } : { sequence: last.sequence, at: Date.parse(last.takenAt) }
  }

  /** Copies, uploads and lists a snapshot, then purges what the kept ones make unnecessary. Returns the snapshot, or undefined when none was listed. */
  async take(epoch: number, stillServing: () => boolean): Promise<SnapshotInfo | undefined> {
    const dir = this.source.scratch('out')
    try {
      const started = Date.now()
      const sequence = await this.source.copy(dir)
      const index = await this.snapshots.index(this.unit)
      const listed = index.snapshots.at(-1)
      if (listed !== undefined && listed.sequence >= sequence) {
        this.newest = { sequence: listed.sequence, at: Date.parse(listed.takenAt) }
        return undefined
      }
      const uploaded = await this.snapshots.upload(this.unit, sequence, dir, this.source.files)
      if (!stillServing()) return undefined
      const info: SnapshotInfo = { sequence, node: this.host.nodeId, epoch, takenAt: new Date(started).toISOString(), ...uploaded }
      const kept = await this.snapshots.record(this.unit, index, info, this.options.keep)
      this.newest = { sequence, at: started }
      const oldest = kept[0]!
      const purged = await this.log.purgeBelow(oldest.sequence + 1)
      const dropped = await this.snapshots.dropUnlisted(this.unit, kept)
      const bytes = info.files.reduce((n, f) => n + f.size, 0)
      this.host.info(`cluster: ${this.source.name}: snapshot at stream sequence ${sequence} (${bytes} bytes, object ${info.object}, ${Date.now() - started} ms); stream purged below ${oldest.sequence + 1} (${purged} entries); ${dropped} older snapshots deleted`)
      return info
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  /**
   * A tail met an entry after `applied + 1`: whether the stream was purged
   * past `applied` (a snapshot is needed), rather than the missing entries
   * being erased key grants, which a host does not need.
   */
  async passedBy(applied: number): Promise<boolean> {
    const { first } = await this.log.bounds()
    if (first <= applied + 1) return false
    return (await this.snapshots.index(this.unit)).snapshots.some((s) => s.sequence > applied)
  }

  /**
   * Before following from `applied + 1`: restores a snapshot when the stream
   * no longer holds that entry, or when this host has nothing yet and a
   * snapshot saves replaying. Returns what was restored, or undefined when
   * the stream alone will do. Throws when the stream was purged past what
   * this host holds and no kept snapshot could be restored (the caller retries).
   */
  async restoreIfBehind(applied: number): Promise<{ sequence: number; destroyed: number[] } | undefined> {
    const { first, last } = await this.log.bounds()
    if (applied + 1 >= first && !(applied === 0 && last > 0)) return undefined
    // Every kept snapshot is bridged by the stream: the owner purges only below the oldest kept one. With none
    // newer than this host's copy, the stream still holds every entry after it: a first sequence past it then
    // comes from erased key grants at the stream's head (docs/design/replication.md), which a host does not need.
    const usable = (await this.snapshots.index(this.unit)).snapshots.filter((s) => s.sequence > applied).reverse()
    if (usable.length === 0) return undefined
    let lastError: unknown
    for (const info of usable) {
      const dir = this.source.scratch('in')
      try {
        const started = Date.now()
        await this.snapshots.download(this.unit, info, dir)
        const restored = await this.source.restore(dir)
        this.host.info(`cluster: ${this.source.name}: restored the snapshot at stream sequence ${restored.sequence} from ${info.node} (${Date.now() - started} ms); following the stream from ${restored.sequence + 1}`)
        return restored
      } catch (err) {
        // Dropped while it was read (a newer one was listed meanwhile), or damaged: the next older one may do.
        lastError = err
        this.host.warn(`cluster: ${this.source.name}: the snapshot at ${info.sequence} could not be restored`, err)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
    throw lastError
  }
}
