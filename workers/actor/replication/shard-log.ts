// A shard's replicated stream (shardStream(n), one subject): the generic
// stream log (src/replication/stream-log.ts: appends fenced by the expected
// last sequence, deduplicated by message id; followed in order) under the
// shard's names, with what only a shard's stream needs: the secure erase of
// key grant messages (crypto-shredding).
import type { NatsConnection } from '@nats-io/nats-core'
import { JetStreamApiError } from '@nats-io/jetstream'
import { shardStream, shardSubject } from '../../../src/contract/cluster-names'
import { openStream, StreamLog } from '../../../src/replication/stream-log'

export { Fenced } from '../../../src/replication/stream-log'

/** JetStream's answers to deleting a message that is gone: JSNoMessageFoundErr, JSSequenceNotFoundErrF. */
const GONE = [10037, 10043]

export class ShardLog extends StreamLog {
  /** Opens the shard's stream, creating it when no host has yet (R3 on three or more NATS servers, else R1). */
  static async open(nc: NatsConnection, shard: number, servers: number, timeoutMs: number): Promise<ShardLog> {
    const stream = shardStream(shard)
    const subject = shardSubject(shard)
    const { js, jsm } = await openStream(nc, stream, subject, servers, timeoutMs)
    return new ShardLog(stream, subject, js, jsm)
  }

  /**
   * Deletes the message at `sequence` with JetStream's secure erase (each
   * server overwrites it in its message store); resolves also when it is gone
   * already (another host erased it).
   */
  async erase(sequence: number): Promise<void> {
    try {
      await this.jsm.streams.deleteMessage(this.stream, sequence, true)
    } catch (err) {
      // 2.9.10 answers "sequence <n> not found" (10043), or 10057 (a failed delete) saying "no message found", for a message already deleted.
      if (err instanceof JetStreamApiError && GONE.includes(err.code)) return
      if (/no message found|sequence \d+ not found/i.test(String((err as Error).message))) return
      throw err
    }
  }
}
