// A replicated unit's stream (a shard's, or the auth store's; one subject
// each): the owner appends each batch's effects with the stream's expected
// last sequence, so an append by a host whose claim another has overtaken
// fails (fencing), and with a message id, so that the same append sent twice
// is stored once. Standbys read it in order from the sequence after the one
// they applied; the owner purges it below a kept snapshot (snapshots.ts).
import type { NatsConnection } from '@nats-io/nats-core'
import { jetstream, JetStreamApiError, jetstreamManager, type ConsumerMessages, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { untilItWorks } from './start-retry'

/** The append was refused because the stream moved on: another host has claimed the unit since. */
export class Fenced extends Error {}

/** JetStream's "wrong last sequence" (JSStreamWrongLastSequenceErrF). */
const WRONG_LAST_SEQUENCE = 10071

/** Opens a unit's stream, creating it when no host has yet (R3 on three or more NATS servers, else R1). */
export async function openStream(nc: NatsConnection, stream: string, subject: string, servers: number, timeoutMs: number): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
  const jsm = await untilItWorks(() => jetstreamManager(nc, { timeout: timeoutMs }), () => nc.isClosed())
  await untilItWorks(async () => {
    try {
      await jsm.streams.info(stream)
    } catch {
      // Two hosts creating it at once with the same configuration both succeed.
      await jsm.streams.add({ name: stream, subjects: [subject], num_replicas: servers >= 3 ? 3 : 1, storage: 'file' as never, duplicate_window: 120_000_000_000 })
    }
  }, () => nc.isClosed())
  return { js: jetstream(nc, { timeout: timeoutMs }), jsm }
}

export class StreamLog {
  protected constructor(readonly stream: string, readonly subject: string, protected readonly js: JetStreamClient, protected readonly jsm: JetStreamManager) {}

  /** A unit's stream (a shard's: ShardLog, workers/actor/replication/shard-log.ts, which also erases key grants). */
  static async openLog(nc: NatsConnection, stream: string, subject: string, servers: number, timeoutMs: number): Promise<StreamLog> {
    const { js, jsm } = await openStream(nc, stream, subject, servers, timeoutMs)
    return new StreamLog(stream, subject, js, jsm)
  }

  /** The stream's last sequence now (0: empty). */
  async lastSequence(): Promise<number> {
    return (await this.jsm.streams.info(this.stream)).state.last_seq
  }

  /** Appends after `after`; resolves to the entry's sequence. Fenced when the stream's last sequence is not `after`. */
  async append(data: Uint8Array, after: number, msgId: string): Promise<number> {
    try {
      const ack = await this.js.publish(this.subject, data, { msgID: msgId, expect: { lastSequence: after } })
      return ack.seq
    } catch (err) {
      if ((err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) || /wrong last sequence/i.test(String((err as Error).message))) throw new Fenced(`${this.stream}: the stream moved past ${after}: ${(err as Error).message}`)
      throw err
    }
  }

  /**
   * Every entry from `from` on, in order, until stopped (a shard's erased
   * messages are skipped). `expiresMs` bounds each pull request, and so the
   * server heartbeats (half of it): a tail whose consumer was on a NATS
   * server that died notices after two missed heartbeats and starts again
   * on another. With the client's default (30 s) a standby stayed behind for
   * 30-75 s after a NATS server kill, and a shard it had to take over had no
   * owner meanwhile.
   */
  async follow(from: number, expiresMs: number): Promise<ConsumerMessages> {
    const consumer = await this.js.consumers.get(this.stream, { opt_start_seq: from })
    return consumer.consume({ expires: expiresMs })
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
}
