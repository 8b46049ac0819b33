// LMDB without its own syncs, safe against a power loss. A journaled shard
// commits with noSync: the journal makes each write durable, and LMDB is
// synced only at a checkpoint. A power loss may then leave any mix of the
// pages written since, meta pages included, which LMDB alone cannot recover
// from. Two things make the last checkpoint's snapshot always recoverable:
// - its writer holds a read transaction on that snapshot until the next
//   checkpoint, so LMDB never writes over a page the snapshot uses;
// - the checkpoint file keeps a copy of the two meta pages as they were at
//   that snapshot. A start after another process wrote the shard puts them
//   back before LMDB opens, so LMDB opens that snapshot, and the journal
//   replays everything after it.
import { closeSync, copyFileSync, existsSync, fdatasyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { RootDatabase } from 'lmdb'
import { writeFile, rename } from 'node:fs/promises'
import { syncPath, syncPathAsync } from '../../src/crypto/synced-files'
import { readMetaPages, type MetaPages } from './lmdb-meta'

export const CHECKPOINT_FILE = 'lmdb-checkpoint'

/**
 * Tests only (test/fault/journal-power-loss.test.ts): a copy of data.mdb
 * made right after each checkpoint's sync, before it is recorded; the test
 * mixes its pages with the file's after a kill -9, as a power loss may.
 */
const COPY_AT_CHECKPOINT = process.env.JOURNAL_TEST_SNAPSHOTS === '1'
export const CHECKPOINT_COPY = 'data.mdb.at-checkpoint'

function copyForPowerLossTest(shardDir: string): void {
  copyFileSync(join(shardDir, 'data.mdb'), join(shardDir, `${CHECKPOINT_COPY}.partial`))
  renameSync(join(shardDir, `${CHECKPOINT_COPY}.partial`), join(shardDir, CHECKPOINT_COPY))
}

/**
 * Who wrote a checkpoint: the boot, process and its start time, so that a
 * start tells another process's unsynced writes (put back) from its own
 * thread's restart (the pages are still in memory: nothing to put back).
 */
export function processIdentity(): string {
  // Read once per process: every checkpoint (ten a second) records it.
  if (identity !== undefined) return identity
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  // Field 22 of /proc/self/stat (after the parenthesised name) is the start time.
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  identity = `${boot}:${process.pid}:${started}`
  return identity
}
let identity: string | undefined

interface CheckpointRecord {
  writer: string
  /** The data file's inode: a checkpoint never applies to a file that took its place (a restore, a copy). */
  inode: number
  txnid: number
  pageSize: number
  pages: string
}

function checkpointText(shardDir: string, pages: MetaPages): string {
  const record: CheckpointRecord = {
    writer: processIdentity(),
    inode: statSync(join(shardDir, 'data.mdb')).ino,
    txnid: pages.txnid,
    pageSize: pages.pageSize,
    pages: pages.bytes.toString('base64'),
  }
  return JSON.stringify(record)
}

/** Writes the checkpoint of `pages` (read right after the sync that made their snapshot durable); synced and renamed into place. */
export function writeCheckpoint(shardDir: string, pages: MetaPages): void {
  const partial = join(shardDir, `${CHECKPOINT_FILE}.partial`)
  writeFileSync(partial, checkpointText(shardDir, pages))
  syncPath(partial)
  renameSync(partial, join(shardDir, CHECKPOINT_FILE))
  syncPath(shardDir)
}

/** writeCheckpoint without blocking the thread: its two syncs would stall every write and read of the actor. */
export async function writeCheckpointAsync(shardDir: string, pages: MetaPages): Promise<void> {
  const partial = join(shardDir, `${CHECKPOINT_FILE}.partial`)
  await writeFile(partial, checkpointText(shardDir, pages))
  await syncPathAsync(partial)
  await rename(partial, join(shardDir, CHECKPOINT_FILE))
  await syncPathAsync(shardDir)
}

function readCheckpoint(shardDir: string): CheckpointRecord | undefined {
  const path = join(shardDir, CHECKPOINT_FILE)
  if (!existsSync(path)) return undefined
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as CheckpointRecord
    return typeof record.txnid === 'number' && typeof record.pages === 'string' ? record : undefined
  } catch {
    // Written whole and renamed into place: a file that does not parse was never a checkpoint.
    return undefined
  }
}

/**
 * Before LMDB opens a shard: when another process committed past the last
 * checkpoint without syncing, its meta pages go back to the checkpoint's
 * (the journal replays the rest). Returns whether it put them back.
 */
export function restoreCheckpoint(shardDir: string): boolean {
  const record = readCheckpoint(shardDir)
  const dataFile = join(shardDir, 'data.mdb')
  // A data file that is not a regular file is for the start-up checks to refuse.
  if (record === undefined || !existsSync(dataFile)) return false
  const file = statSync(dataFile)
  if (!file.isFile() || file.ino !== record.inode || record.writer === processIdentity()) return false
  const current = readMetaPages(dataFile)
  if (current === undefined || current.txnid <= record.txnid || current.pageSize !== record.pageSize) return false
  const pages = Buffer.from(record.pages, 'base64')
  const fd = openSync(dataFile, 'r+')
  try {
    let done = 0
    while (done < pages.length) done += writeSync(fd, pages, done, pages.length - done, done)
    fdatasyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return true
}

/** A shard a writer without a journal opens (a tool): its commits are synced, so no checkpoint may roll them back later. */
export function dropCheckpoint(shardDir: string): void {
  const path = join(shardDir, CHECKPOINT_FILE)
  if (!existsSync(path)) return
  rmSync(path)
  syncPath(shardDir)
}

/** lmdb-js's sync, which its typings omit: on another thread with a callback; its native environment's, at once. */
interface Syncs {
  sync(callback: (error?: unknown) => void): unknown
  env: { sync(): void }
}

/**
 * The journaled writer's hold on its last checkpoint: syncs LMDB, keeps a
 * read transaction on the snapshot the sync made durable, and records that
 * snapshot's meta pages. Call between transactions (the writer's own thread
 * commits synchronously, so nothing commits between the hold and the read of
 * the meta pages).
 */
export class SyncedSnapshot {
  private held: { done(): void } | undefined
  private readonly syncs: Syncs
  /** LMDB syncs so far (the actor's stats report them). */
  syncCount = 0

  constructor(private readonly env: RootDatabase, private readonly shardDir: string) {
    this.syncs = env as unknown as Syncs
  }

  /** At open, before any write: LMDB synced and its newest snapshot held now. */
  takeNow(): void {
    const next = this.hold()
    try {
      this.syncs.env.sync()
      this.syncCount++
      if (COPY_AT_CHECKPOINT) copyForPowerLossTest(this.shardDir)
      writeCheckpoint(this.shardDir, next.pages)
    } catch (err) {
      next.pin.done()
      throw err
    }
    this.holdNow(next.pin)
  }

  /** A checkpoint: the newest snapshot is held, synced, then recorded; the one held before is let go. */
  async take(): Promise<void> {
    const next = this.hold()
    try {
      await new Promise<void>((resolve, reject) => { this.syncs.sync((error) => (error === undefined || error === null ? resolve() : reject(error))) })
      this.syncCount++
      if (COPY_AT_CHECKPOINT) copyForPowerLossTest(this.shardDir)
      // The snapshot held until now stays held until the new checkpoint file is durable.
      await writeCheckpointAsync(this.shardDir, next.pages)
    } catch (err) {
      next.pin.done()
      throw err
    }
    this.holdNow(next.pin)
  }

  release(): void {
    this.held?.done()
    this.held = undefined
  }

  private hold(): { pin: { done(): void }; pages: MetaPages } {
    this.env.resetReadTxn()
    const pin = this.env.useReadTransaction()
    const pages = readMetaPages(join(this.shardDir, 'data.mdb'))
    const { lastTxnId } = this.env.getStats() as { lastTxnId: number }
    if (pages === undefined || pages.txnid !== lastTxnId) {
      pin.done()
      throw new Error(`shard ${this.shardDir}: LMDB's meta pages name transaction ${pages?.txnid ?? 'none'}, its environment ${lastTxnId}: this build does not know this LMDB's file layout`)
    }
    return { pin, pages }
  }

  /** The new checkpoint is recorded: its snapshot is held from now on, the one before is let go. */
  private holdNow(pin: { done(): void }): void {
    this.release()
    this.held = pin
  }
}
