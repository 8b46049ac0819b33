// What a failed commit answers: 507 for a full disk, 503 for a shard this
// host does not serve (cluster mode), 500 otherwise.
import { DISK_FULL_MESSAGE, isDiskFull } from '../../src/core/storage-failure'
import { fail, type OpResult } from './result'
import { ShardUnavailable } from './unavailable'

export function commitFailure(cause: unknown): OpResult {
  if (isDiskFull(cause)) return fail('insufficient_storage', DISK_FULL_MESSAGE)
  if (cause instanceof ShardUnavailable) return { ...fail('service_unavailable', cause.message), retryAfter: cause.retryAfter, ...(cause.notRun ? { notRun: true as const } : {}) }
  return fail('internal_error', 'internal error; the write was not applied')
}
