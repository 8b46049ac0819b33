// A shard's replicated stream: the generic stream log (src/replication/stream-log.ts) under the shard's names.
import type { NatsConnection } from '@nats-io/nats-core'
import { shardStream, shardSubject } from '../../../src/contract/cluster-names'
import { StreamLog } from '../../../src/replication/stream-log'

export { Fenced } from '../../../src/replication/stream-log'
export type ShardLog = StreamLog

export const ShardLog = {
  open: (nc: NatsConnection, shard: number, servers: number, timeoutMs: number): Promise<StreamLog> => StreamLog.open(nc, shardStream(shard), shardSubject(shard), servers, timeoutMs),
}
