// The local journal of a host without cluster mode: each group commit's
// effects (recorded as cluster mode records them for its stream) are
// appended to the shard's journal in the batch's own LMDB transaction, which
// also records the journal position. LMDB commits without syncing, on the
// actor's thread; the batch is answered once its record is durable (one
// fdatasync for everything appended meanwhile). LMDB is synced at
// checkpoints (store/lmdb-checkpoint.ts), and a start replays what its
// data.mdb lacks. docs/design/architecture.md, "Writes: the journal".
import { ABORT } from 'lmdb'
import { decodeEntry, encodeEntry } from '../../src/replication/effects'
import { journalDir, JournalDamaged, ShardJournal } from '../journal/shard-journal'
import { ShardDamage } from '../store/shard-files'
import { dropCheckpoint } from '../store/lmdb-checkpoint'
import { dirname } from 'node:path'
import { shardPath, type ShardStore } from '../store/shard-store'
import { applyEntry, journalPosition, JOURNAL_KEY, setJournalPosition, type Applied } from './replication/apply'
import { Recorder } from './replication/recorder'

/**
 * A checkpoint once this many bytes were appended since the last one began,
 * or once this long has passed with anything appended. Until a checkpoint,
 * LMDB cannot reuse the pages the commits since the last one freed (the
 * held snapshot uses them), so the data file grows by what they write. Often
 * and small: a checkpoint's sync writes every page committed since the last
 * one (tens of KB per commit), and the journal's fdatasyncs wait behind it on
 * the disk; at 1 s apart that wait was a write's p99 at one connection.
 */
const CHECKPOINT_BYTES = Number(process.env.JOURNAL_CHECKPOINT_BYTES ?? 8 * 1024 * 1024)
const CHECKPOINT_MS = Number(process.env.JOURNAL_CHECKPOINT_MS ?? 100)

/** The `node` of a record that withdraws the record at position `epoch` (its batch's commit failed). */
const CANCEL = 'cancel'

export interface Journaled {
  journal: ShardJournal
  recorder: Recorder
}

/**
 * Opens a shard's journal and replays into its LMDB what the journal holds
 * beyond the position LMDB recorded (idempotent: effects are the values
 * written). Consents the replay revoked are finished by the start's
 * finishRevocations, as after any crash. A damaged journal is a ShardDamage
 * (one error line).
 */
export function replayJournal(store: ShardStore, dataDir: string): Journaled {
  const recorder = new Recorder(store, ABORT)
  const applied = journalPosition(store)
  let read: ReturnType<typeof ShardJournal.read>
  try {
    read = ShardJournal.read(journalDir(shardPath(dataDir, store.shard)), applied)
  } catch (err) {
    if (err instanceof JournalDamaged) throw new ShardDamage(`shard ${store.shard}: ${err.message}`)
    throw err
  }
  const into: Applied = { revoked: [], erasures: false }
  if (read.replay.length > 0) {
    const entries = read.replay.map((record) => ({ position: record.position, entry: decodeEntry(record.payload) }))
    const cancelled = new Set(entries.flatMap(({ entry }) => ('effects' in entry && entry.node === CANCEL ? [entry.epoch] : [])))
    store.env.transactionSync(() => {
      for (const { position, entry } of entries) {
        // A withdrawn batch, and the cancel record itself, only move the position.
        const applied = cancelled.has(position) || ('effects' in entry && entry.node === CANCEL) ? { node: '', epoch: 0, effects: [] } : entry
        applyEntry(recorder, applied, position, into, JOURNAL_KEY)
      }
    })
    // Synced before start() removes the segments it came from.
    store.synced!.takeNow()
  }
  read.journal.start()
  return { journal: read.journal, recorder }
}

export class LocalJournals {
  private readonly timer: NodeJS.Timeout

  constructor(private readonly shards: Map<ShardStore, Journaled>) {
    this.timer = setInterval(() => {
      for (const [store, j] of this.shards) if (j.journal.bytesSinceCheckpoint > 0) void this.checkpoint(store, j.journal.wantsRotation).catch(() => undefined)
    }, CHECKPOINT_MS)
    this.timer.unref()
  }

  /**
   * A write transaction of the shard (a group commit's batch, a timer's
   * writes): run, its effects appended to the journal and its position
   * recorded, committed at once on this thread (LMDB does not sync; a throw
   * rolls all of it back). Resolves with the run's result once the record
   * is durable.
   */
  transact<T>(store: ShardStore, run: () => T): Promise<T> {
    const j = this.of(store)
    let position = 0
    let result!: T
    let durable: Promise<void> = Promise.resolve()
    try {
      store.env.transactionSync(() => {
        j.recorder.start()
        try {
          result = run()
        } catch (err) {
          j.recorder.take()
          throw err
        }
        const effects = j.recorder.take()
        if (effects.length > 0) {
          // The position first: if LMDB cannot take it, no record was appended.
          setJournalPosition(store, j.journal.lastPosition + 1)
          position = j.journal.append(encodeEntry({ node: '', epoch: 0, effects }))
          // The fdatasync starts now, on another thread, while LMDB commits here: the two overlap.
          durable = j.journal.durable(position)
          durable.catch(() => undefined)
        }
      })
    } catch (err) {
      // Nothing committed: a record already appended (LMDB's commit failed on a full disk) must never be replayed.
      if (position === 0) return Promise.reject(err)
      return this.withdraw(j, position).then(() => { throw err })
    }
    return durable.then(() => {
      if (j.journal.bytesSinceCheckpoint >= CHECKPOINT_BYTES) void this.checkpoint(store, j.journal.wantsRotation).catch(() => undefined)
      return result
    })
  }

  /** Takes back the record of a batch whose commit failed: cut off when it is the last, else a durable cancel record. */
  private async withdraw(j: Journaled, position: number): Promise<void> {
    if (j.journal.cutLast(position)) return
    const cancel = j.journal.append(encodeEntry({ node: CANCEL, epoch: position, effects: [] }))
    await j.journal.durable(cancel)
  }

  /**
   * LMDB synced and its snapshot held (store/lmdb-checkpoint.ts). With
   * `rotate`, the journal's older segments are dropped too: a revocation
   * waits for that before its keys are destroyed (no segment may keep what
   * it shreds), and a clean stop ends with it.
   */
  checkpoint(store: ShardStore, rotate = true): Promise<void> {
    const j = this.of(store)
    return j.journal.checkpoint(async () => {
      // Every record appended so far is committed, or withdrawn (a cancel record LMDB's position has not passed):
      // the snapshot taken now must hold the position of the last one, or the next start would miss those it skips.
      if (journalPosition(store) < j.journal.lastPosition) store.env.transactionSync(() => setJournalPosition(store, j.journal.lastPosition))
      await store.synced!.take()
    }, rotate)
  }

  /**
   * A clean stop: the last checkpoint, then the files close. LMDB is then
   * synced whole, so the checkpoint file goes: a start puts meta pages back
   * only after a stop that was not clean, never over what a tool wrote since.
   */
  async close(): Promise<void> {
    clearInterval(this.timer)
    for (const [store, j] of this.shards) {
      await this.checkpoint(store)
      j.journal.close()
      dropCheckpoint(dirname(j.journal.dir))
    }
  }

  private of(store: ShardStore): Journaled {
    const j = this.shards.get(store)
    if (j === undefined) throw new Error(`shard ${store.shard} has no journal`)
    return j
  }
}
