// What a failed commit answers. A full disk is the operator's problem, not a
// bug, and retrying will not help until space is freed: 507, not 500 or 503.
import { fail, type OpResult } from './result'

/** ENOSPC (28) or EDQUOT (122) from the write or the sync, as lmdb-js or node:fs report it. */
export function isDiskFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ENOSPC' || code === 'EDQUOT') return true
  return /No space left on device|ENOSPC|Disk quota exceeded|MDB_MAP_FULL/i.test(err.message)
}

export function commitFailure(err: unknown): OpResult {
  if (isDiskFull(err)) return fail('insufficient_storage', 'the disk of the data directory is full; the write was not applied')
  return fail('internal_error', 'internal error; the write was not applied')
}
