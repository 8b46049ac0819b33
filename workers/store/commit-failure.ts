// What a failed commit answers: 507 for a full disk, 500 otherwise.
import { DISK_FULL_MESSAGE, isDiskFull } from '../../src/storage-failure'
import { fail, type OpResult } from './result'

export function commitFailure(cause: unknown): OpResult {
  if (isDiskFull(cause)) return fail('insufficient_storage', DISK_FULL_MESSAGE)
  return fail('internal_error', 'internal error; the write was not applied')
}
