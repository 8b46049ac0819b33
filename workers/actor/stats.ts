// What the shard actor tells the front thread's metrics (src/shard/shard-stats.ts):
// per shard, each group commit's size and its commit and flush times since the
// last report, the events appended, and the LMDB map's size and use. One
// message a second, so the hot path only pushes numbers onto arrays.
import type { ShardStats } from '../../src/contract/messages'
import { appendedSinceReport } from '../store/events'
import type { ShardStore } from '../store/shard-store'

export const STATS_INTERVAL_MS = 1000

interface Observed { batchSizes: number[]; commitSeconds: number[]; flushSeconds: number[] }

/** The page figures of lmdb-js's getStats() that say how much of the map is used. */
interface MapStats { pageSize: number; lastPageNumber: number; mapSize: number }

export class ActorStats {
  private observed = new Map<number, Observed>()

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
  take(stores: Iterable<ShardStore>): ShardStats[] {
    const out: ShardStats[] = []
    for (const store of stores) {
      const o = this.observed.get(store.shard) ?? { batchSizes: [], commitSeconds: [], flushSeconds: [] }
      const map = store.env.getStats() as MapStats
      out.push({
        shard: store.shard, ...o, eventsAppended: appendedSinceReport.get(store.shard) ?? 0,
        mapUsedBytes: (map.lastPageNumber + 1) * map.pageSize, mapSizeBytes: map.mapSize,
      })
    }
    this.observed.clear()
    appendedSinceReport.clear()
    return out
  }
}
