// The flush to disk of the commit that takes the writes just queued (the
// shard actors' group commit).
//
// lmdb-js's `env.flushed` is read when it is awaited: it is the flush of the
// newest commit at that moment. Awaited after a commit resolved, that is
// often the next commit, already under way with overlappingSync, so an
// answer waited one whole extra commit and sync. Read right after the writes
// were queued, it is the flush of their own commit.

/** The part of an lmdb-js environment this needs. */
export interface Flushable {
  readonly flushed: PromiseLike<unknown>
}

/**
 * Call synchronously right after queueing the writes (no await in between).
 * It rejects only when the commit itself failed, which the caller learns from
 * the writes' own promise; such a rejection is marked handled here.
 */
export function flushOfQueuedWrites(env: Flushable): Promise<void> {
  const flushed = new Promise<void>((resolve, reject) => {
    env.flushed.then(() => resolve(), reject)
  })
  flushed.catch(() => undefined)
  return flushed
}
