// Telling a full disk from a bug when an LMDB write fails, in the front
// thread (auth store) and in the shard actors alike. A full disk is the
// operator's to fix, and retrying will not help until space is freed: 507.

/** ENOSPC (28) or EDQUOT (122) from a write or a sync, as lmdb-js or node:fs report it. */
export function isDiskFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as NodeJS.ErrnoException).code as unknown
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 28 || code === 122) return true
  return /No space left on device|ENOSPC|Disk quota exceeded|MDB_MAP_FULL/i.test(err.message)
}

export const DISK_FULL_MESSAGE = 'the disk of the data directory is full; the write was not applied'

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
