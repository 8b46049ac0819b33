// The shard actors' periodic figures (workers/actor/stats.ts) into the
// Prometheus metrics, and their log records into the one log.
import type { ActorReply, ShardStats } from '../contract/messages'
import { log } from '../telemetry/log'
import { commitBatchSize, commitSeconds, dataKeysDestroyed, eventsAppended, flushSeconds, journalBytes, journalSyncs, lmdbSyncs, mapSizeBytes, mapUsedBytes } from '../telemetry/metrics'

export function recordShardStats(shards: readonly ShardStats[]): void {
  for (const s of shards) {
    const shard = String(s.shard)
    const size = commitBatchSize.labels(shard)
    for (const n of s.batchSizes) size.observe(n)
    const commit = commitSeconds.labels(shard)
    for (const n of s.commitSeconds) commit.observe(n)
    const flush = flushSeconds.labels(shard)
    for (const n of s.flushSeconds) flush.observe(n)
    if (s.eventsAppended > 0) eventsAppended.labels(shard).inc(s.eventsAppended)
    if (s.keysDestroyed > 0) dataKeysDestroyed.labels(shard).inc(s.keysDestroyed)
    if (s.journalSyncs > 0) journalSyncs.labels(shard).inc(s.journalSyncs)
    if (s.journalBytes > 0) journalBytes.labels(shard).inc(s.journalBytes)
    if (s.lmdbSyncs > 0) lmdbSyncs.labels(shard).inc(s.lmdbSyncs)
    mapUsedBytes.labels(shard).set(s.mapUsedBytes)
    mapSizeBytes.labels(shard).set(s.mapSizeBytes)
  }
}

/** An actor's log record, with the request ids of the calls it names (those still waiting for their reply). */
export function logActorRecord(actor: number, record: ActorReply & { kind: 'log' }, requestIdOf: (call: number) => string | undefined): void {
  const requestIds = record.requests.map(requestIdOf).filter((r): r is string => r !== undefined)
  const fields = { actor, requestId: requestIds.length === 1 ? requestIds[0] : undefined, requestIds: requestIds.length > 1 ? requestIds : undefined, err: record.error }
  log[record.level](fields, record.message)
}
