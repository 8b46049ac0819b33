// A restore's core, for any unit (a shard's databases, the auth store's):
// one live database made to hold exactly what the snapshot's copy of it
// holds, a batch of records per transaction so that the thread keeps
// serving (and renewing leases) in between.
import type { Database, Key } from 'lmdb'

/** Records per restore transaction. */
const RESTORE_BATCH = 2000

export interface RecordWrites<K> {
  put(key: K, value: unknown): unknown
  remove(key: K): unknown
}

/**
 * Empties `live` (keys collected a batch at a time before any is removed),
 * then copies every record of `from`; `writes` are the unrecorded calls a
 * standby applies with, run inside `transaction`.
 */
export async function replaceRecords<K extends Key>(
  live: Database<unknown, K>, from: Database<unknown, K>, writes: RecordWrites<K>, transaction: (run: () => void) => Promise<unknown>,
): Promise<void> {
  for (;;) {
    const keys = [...live.getKeys({ limit: RESTORE_BATCH })]
    if (keys.length === 0) break
    await transaction(() => { for (const k of keys) writes.remove(k) })
  }
  let start: K | undefined
  for (;;) {
    const batch = [...from.getRange(start === undefined ? { limit: RESTORE_BATCH } : { start, exclusiveStart: true, limit: RESTORE_BATCH })]
    if (batch.length === 0) break
    await transaction(() => { for (const { key, value } of batch) writes.put(key, value) })
    start = batch[batch.length - 1]!.key
  }
}
