// Telling a full disk from a bug when an LMDB write fails, in the front
// thread (auth store) and in the shard actors alike. A full disk is the
// operator's to fix, and retrying will not help until space is freed: 507.
import { statfsSync } from 'node:fs'

/**
 * The directories of the LMDB environments this thread writes (one set per
 * thread): their file systems are asked for free space when a write fails
 * with EIO.
 */
const storageDirs = new Set<string>()

export function noteStorageDir(dir: string): void {
  storageDirs.add(dir)
}

/**
 * Below this much free space a failed write's EIO is a full disk. LMDB
 * (lmdb-js 3.5, mdb.c) turns a short write, which is what a file system that
 * fills up during the write returns, into EIO; only a write that finds the
 * disk already full is ENOSPC. A device error on a disk with room stays a 500.
 */
const LOW_SPACE_BYTES = 1 << 20

/**
 * A full disk, as lmdb-js or node:fs report it: ENOSPC (28) or EDQUOT (122)
 * from a write or a sync, LMDB's map full, or EIO while the file system of an
 * LMDB environment of this thread is (nearly) out of space.
 */
export function isDiskFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as NodeJS.ErrnoException).code as unknown
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 28 || code === 122) return true
  if (/No space left on device|ENOSPC|Disk quota exceeded|MDB_MAP_FULL/i.test(err.message)) return true
  return (code === 'EIO' || code === 5 || /Input\/output error/i.test(err.message)) && spaceIsLow()
}

function spaceIsLow(): boolean {
  for (const dir of storageDirs) {
    try {
      const fs = statfsSync(dir)
      if (fs.bavail * fs.bsize < LOW_SPACE_BYTES) return true
    } catch {
      // A directory that cannot be asked says nothing about the disk.
    }
  }
  return false
}

export const DISK_FULL_MESSAGE = 'the disk of the data directory is full; the write was not applied'

/** Retry-After of a 507: freeing space is an operator's work, so clients back off for a while. */
export const DISK_FULL_RETRY_AFTER_SECONDS = 30

/**
 * lmdb-js rejects the writes of a failed commit with a generic "Commit
 * failed" error whose `commitError` promise holds the cause. Awaiting it here
 * also marks that promise handled (left alone it is an unhandled rejection).
 */
export async function causeOf(err: unknown): Promise<unknown> {
  const inner = (err as { commitError?: unknown } | null)?.commitError
  if (!(inner instanceof Promise)) return err
  const timeout = new Promise((resolve) => setTimeout(() => resolve(err), 1000).unref())
  return Promise.race([inner.then(() => err, (cause: unknown) => cause), timeout])
}

/** Whether `err` is lmdb-js's generic commit failure (its cause comes from causeOf). */
export function isCommitFailure(err: unknown): boolean {
  return (err as { commitError?: unknown } | null)?.commitError instanceof Promise
}
