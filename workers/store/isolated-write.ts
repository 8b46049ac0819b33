// One write of a group commit in a child transaction of the batch's
// transaction: if it throws, LMDB rolls back its own effects and only it
// fails; the other writes of the batch (other tenants' too) are answered for
// what happened to them.
import { commitFailure } from './commit-failure'
import type { OpResult } from './result'
import { forgetUncommitted, type ShardStore } from './shard-store'

/**
 * Runs `apply` inside the current write transaction as a child transaction.
 * On a throw the child is aborted, `undo` drops what the write noted outside
 * LMDB, the shard's caches are cleared (they may hold what was rolled back)
 * and the write alone answers an error.
 */
export function applyIsolated(store: ShardStore, apply: () => OpResult, undo: () => void, label: string): OpResult {
  try {
    // Inside a running write transaction lmdb-js runs the child synchronously
    // and returns the callback's value (its typings say Promise).
    return store.env.childTransaction(apply) as unknown as OpResult
  } catch (err) {
    undo()
    forgetUncommitted(store)
    console.error(`shard actor: ${label} failed and was rolled back:`, err)
    return commitFailure(err)
  }
}
