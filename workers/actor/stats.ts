// What the shard actor tells the front thread's metrics (src/shards/shard-stats.ts):
// per shard, each group commit's size and its commit and flush times since the
// last report, the events appended, the data keys destroyed, the journal's fdatasyncs and bytes and
// LMDB's syncs, and the LMDB map's size and use. One message a second, so
// the hot path only pushes numbers onto arrays and counts.
import type { ShardStats } from '../../src/contract/messages'
import { appendedSinceReport } from '../store/events'
import { destroyedSinceReport } from '../store/shred-keys'
import type { ShardJournal } from '../journal/shard-journal'
import type { ShardStore } from '../store/shard-store'

export const STATS_INTERVAL_MS = 1000

interface Observed { batchSizes: number[]; commitSeconds: number[]; flushSeconds: number[] }

/** The page figures of lmdb-js's getStats() that say how much of the map is used. */
interface MapStats { pageSize: number; lastPageNumber: number; mapSize: number }

/** Running totals of a shard's syncs and journal bytes, as of the last report. */
interface Totals { journalSyncs: number; journalBytes: number; lmdbSyncs: number }

export class ActorStats {
  private observed = new Map<number, Observed>()
  private reported = new Map<number, Totals>()

  commit(shard: number, size: number, commitSeconds: number, flushSeconds: number): void {
    let o = this.observed.get(shard)
    if (o === undefined) {
      o = { batchSizes: [], commitSeconds: [], flushSeconds: [] }
      this.observed.set(shard, o)
    }
    o.batchSizes.push(size)
    o.commitSeconds.push(commitSeconds)
    o.flushSeconds.push(flushSeconds)
  }

  /** The report since the last one; starts the next. */
  take(stores: Iterable<ShardStore>, journalOf: (store: ShardStore) => ShardJournal | undefined): ShardStats[] {
    const out: ShardStats[] = []
    for (const store of stores) {
      const o = this.observed.get(store.shard) ?? { batchSizes: [], commitSeconds: [], flushSeconds: [] }
      const map = store.env.getStats() as MapStats
      const journal = journalOf(store)
      const now: Totals = { journalSyncs: journal?.syncCount ?? 0, journalBytes: journal?.bytesAppended ?? 0, lmdbSyncs: store.synced?.syncCount ?? 0 }
      const before = this.reported.get(store.shard) ?? { journalSyncs: 0, journalBytes: 0, lmdbSyncs: 0 }
      this.reported.set(store.shard, now)
      out.push({
        shard: store.shard, ...o, eventsAppended: appendedSinceReport.get(store.shard) ?? 0, keysDestroyed: destroyedSinceReport.get(store.shard) ?? 0,
        journalSyncs: now.journalSyncs - before.journalSyncs, journalBytes: now.journalBytes - before.journalBytes, lmdbSyncs: now.lmdbSyncs - before.lmdbSyncs,
        mapUsedBytes: (map.lastPageNumber + 1) * map.pageSize, mapSizeBytes: map.mapSize,
      })
    }
    this.observed.clear()
    appendedSinceReport.clear()
    destroyedSinceReport.clear()
    return out
  }
}
