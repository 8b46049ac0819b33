// A shard's replicated stream (shardStream(n), one subject): the owner
// appends each batch's effects with the stream's expected last sequence, so
// an append by a host whose claim another has overtaken fails (fencing), and
// with a message id, so that the same append sent twice is stored once.
// Standbys read it in order from the sequence after the one they applied.
import type { NatsConnection } from '@nats-io/nats-core'
import { jetstream, JetStreamApiError, jetstreamManager, type ConsumerMessages, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { shardStream, shardSubject } from '../../../src/contract/cluster-names'

/** The append was refused because the stream moved on: another host has claimed the shard since. */
export class Fenced extends Error {}

/** JetStream's "wrong last sequence" (JSStreamWrongLastSequenceErrF). */
const WRONG_LAST_SEQUENCE = 10071
/** JetStream's answers to deleting a message that is gone: JSNoMessageFoundErr, JSSequenceNotFoundErrF. */
const GONE = [10037, 10043]

export class ShardLog {
  readonly stream: string
  readonly subject: string

  private constructor(readonly shard: number, private readonly js: JetStreamClient, private readonly jsm: JetStreamManager) {
    this.stream = shardStream(shard)
    this.subject = shardSubject(shard)
  }

  /** Opens the shard's stream, creating it when no host has yet (R3 on three or more NATS servers, else R1). */
  static async open(nc: NatsConnection, shard: number, servers: number, timeoutMs: number): Promise<ShardLog> {
    const jsm = await jetstreamManager(nc, { timeout: timeoutMs })
    const log = new ShardLog(shard, jetstream(nc, { timeout: timeoutMs }), jsm)
    try {
      await jsm.streams.info(log.stream)
    } catch {
      // Two hosts creating it at once with the same configuration both succeed.
      await jsm.streams.add({ name: log.stream, subjects: [log.subject], num_replicas: servers >= 3 ? 3 : 1, storage: 'file' as never, duplicate_window: 120_000_000_000 })
    }
    return log
  }

  /** The stream's last sequence now (0: empty). */
  async lastSequence(): Promise<number> {
    return (await this.jsm.streams.info(this.stream)).state.last_seq
  }

  /**
   * The stream's first and last sequence now. After a purge below a snapshot
   * (snapshots.ts) `first` is the entry after it; with every entry purged,
   * first is last + 1 (the last sequence survives a purge, so fencing by it
   * still holds).
   */
  async bounds(): Promise<{ first: number; last: number }> {
    const { state } = await this.jsm.streams.info(this.stream)
    return { first: state.first_seq, last: state.last_seq }
  }

  /** Removes every entry below `sequence` (they are inside a kept snapshot). */
  async purgeBelow(sequence: number): Promise<number> {
    // Nothing is below 1, and a purge "up to" 0 or 1 would be taken as a purge of everything.
    if (sequence <= 1) return 0
    return (await this.jsm.streams.purge(this.stream, { seq: sequence })).purged
  }

  /** Appends after `after`; resolves to the entry's sequence. Fenced when the stream's last sequence is not `after`. */
  async append(data: Uint8Array, after: number, msgId: string): Promise<number> {
    try {
      const ack = await this.js.publish(this.subject, data, { msgID: msgId, expect: { lastSequence: after } })
      return ack.seq
    } catch (err) {
      if ((err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) || /wrong last sequence/i.test(String((err as Error).message))) throw new Fenced(`shard ${this.shard}: the stream moved past ${after}: ${(err as Error).message}`)
      throw err
    }
  }

  /**
   * Deletes the message at `sequence` with JetStream's secure erase (each
   * server overwrites it in its message store); true also when it is gone
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

  /** Every entry from `from` on, in order, until stopped (erased messages are skipped). */
  async follow(from: number): Promise<ConsumerMessages> {
    const consumer = await this.js.consumers.get(this.stream, { opt_start_seq: from })
    return consumer.consume()
  }
}
