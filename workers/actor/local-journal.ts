// The local journal of a host without cluster mode: each group commit's
// effects (recorded as cluster mode records them for its stream) are
// appended to the shard's journal in the batch's own LMDB transaction, which
// also records the journal position. The batch is answered once the record
// is durable (one fdatasync for everything appended meanwhile) and the LMDB
// commit is visible; LMDB syncs on its own time (overlappingSync), and a
// start replays what its data.mdb lacks. docs/architecture.md, "Writes: the journal".
import { ABORT } from 'lmdb'
import { mkdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { decodeEntry, encodeEntry } from '../../src/replication/effects'
import { flushOfQueuedWrites } from '../../src/contract/commit-flush'
import { JournalDamaged, ShardJournal } from '../journal/shard-journal'
import { CommitVisibility } from '../store/commit-visibility'
import { ShardDamage } from '../store/shard-files'
import { commitVisible } from '../store/write-generations'
import { shardPath, type ShardStore } from '../store/shard-store'
import { applyEntry, journalPosition, JOURNAL_KEY, setJournalPosition, type Applied } from './replication/apply'
import { Recorder } from './replication/recorder'

/** A checkpoint once this many bytes were appended since the last one began, */
const CHECKPOINT_BYTES = Number(process.env.JOURNAL_CHECKPOINT_BYTES ?? 32 * 1024 * 1024)
/** or once this long has passed with anything appended. */
const CHECKPOINT_MS = Number(process.env.JOURNAL_CHECKPOINT_MS ?? 10_000)

/**
 * Tests only (test/fault/journal-power-loss.test.ts): at each checkpoint, a
 * copy of data.mdb as LMDB's sync left it, which the test puts back after a
 * kill -9 to stand in for what a power loss leaves of the file.
 */
const SNAPSHOT_AT_CHECKPOINT = process.env.JOURNAL_TEST_SNAPSHOTS === '1'
export const CHECKPOINT_SNAPSHOT = 'data.mdb.at-checkpoint'

async function snapshotForPowerLossTest(store: ShardStore, dir: string): Promise<void> {
  // LMDB copies into a directory (its data.mdb); the file then takes its place at once.
  const partial = join(dir, `${CHECKPOINT_SNAPSHOT}.partial`)
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial)
  await store.env.backup(partial, false)
  renameSync(join(partial, 'data.mdb'), join(dir, CHECKPOINT_SNAPSHOT))
  rmSync(partial, { recursive: true, force: true })
}

/** The `node` of a record that withdraws the record at position `epoch` (its batch's commit failed). */
const CANCEL = 'cancel'

export const journalDir = (dataDir: string, shard: number): string => join(shardPath(dataDir, shard), 'journal')

export interface Journaled {
  journal: ShardJournal
  recorder: Recorder
  visibility: CommitVisibility
  /** Commits under way. */
  commits: Set<Promise<unknown>>
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
    read = ShardJournal.read(journalDir(dataDir, store.shard), applied)
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
  }
  read.journal.start()
  const visibility = new CommitVisibility(store.env, () => {
    store.env.resetReadTxn()
    commitVisible(store.env)
  })
  return { journal: read.journal, recorder, visibility, commits: new Set() }
}

export class LocalJournals {
  private readonly timer: NodeJS.Timeout

  constructor(private readonly shards: Map<ShardStore, Journaled>) {
    // The replayed segments go at the first checkpoint, once LMDB's sync holds them.
    for (const store of shards.keys()) void this.checkpoint(store).catch(() => undefined)
    this.timer = setInterval(() => {
      for (const [store, j] of this.shards) if (j.journal.bytesSinceCheckpoint > 0) void this.checkpoint(store).catch(() => undefined)
    }, CHECKPOINT_MS)
    this.timer.unref()
  }

  /**
   * The group commit's transaction: run, its effects appended to the journal
   * and its position recorded, committed. Resolves with the run's result once
   * the record is durable and the commit visible to every reader, without
   * waiting for LMDB's own sync (commit-visibility.ts).
   */
  transact<T>(store: ShardStore, run: () => T): Promise<T> {
    const j = this.of(store)
    let position = 0
    let result: T
    let visible: Promise<unknown> | undefined
    let durable: Promise<void> | undefined
    let ran!: () => void
    const callbackRan = new Promise<void>((resolve) => { ran = resolve })
    const committed = store.env.transaction(() => {
      // In a child transaction: a journal that cannot take the record (a full disk) rolls the batch back
      // (lmdb-js commits an asynchronous transaction whose callback threw).
      store.env.childTransaction(() => {
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
        }
      })
      if (position !== 0) {
        // The fdatasync starts now, while LMDB commits: the disk does both at once.
        durable = j.journal.durable(position)
        durable.catch(() => undefined)
      }
      visible = j.visibility.ofRunningTransaction()
      ran()
      return result
    }) as Promise<T>
    j.commits.add(committed)
    const forget = (): void => { j.commits.delete(committed) }
    committed.then(forget, forget)
    // Visible, or failed (a failure rejects `committed` before any visibility), or synced (no report came).
    const seen = Promise.race([committed, callbackRan.then(() => visible ?? committed)])
    // A commit that fails after its record was appended (LMDB's own write on a full disk) is answered
    // as failed: its record must never be replayed.
    const unjournaled = seen.catch(async (err: unknown) => {
      if (position !== 0) await this.withdraw(j, position)
      throw err
    })
    return unjournaled.then(async () => {
      if (durable !== undefined) await durable
      if (j.journal.bytesSinceCheckpoint >= CHECKPOINT_BYTES) void this.checkpoint(store).catch(() => undefined)
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
   * Waits until LMDB's own sync holds every record appended so far, then
   * drops the journal's older segments: a revocation waits for this before
   * its keys are destroyed (no segment may keep what it shreds), and a
   * clean stop ends with it.
   */
  checkpoint(store: ShardStore): Promise<void> {
    const j = this.of(store)
    return j.journal.checkpoint(async () => {
      // Every commit whose record is in the older segments was queued before this checkpoint began.
      await Promise.allSettled([...j.commits])
      // A commit after them, and its sync: LMDB syncs in order, so theirs are on the disk too.
      const marker = store.env.transaction(() => setJournalPosition(store, journalPosition(store)))
      const flushed = flushOfQueuedWrites(store.env)
      await marker
      await flushed
      if (SNAPSHOT_AT_CHECKPOINT) await snapshotForPowerLossTest(store, dirname(j.journal.dir))
    })
  }

  /** A clean stop: the last checkpoint, then the files close. */
  async close(): Promise<void> {
    clearInterval(this.timer)
    for (const [store, j] of this.shards) {
      await this.checkpoint(store)
      j.journal.close()
    }
  }

  private of(store: ShardStore): Journaled {
    const j = this.shards.get(store)
    if (j === undefined) throw new Error(`shard ${store.shard} has no journal`)
    return j
  }
}
