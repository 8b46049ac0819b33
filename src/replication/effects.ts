// What a replicated unit's stream carries (docs/design/replication.md, "The replicated
// log"): one message per write batch, its effects as the store wrote them, an
// owner's claim (no effects: it moves the stream's last sequence, so a
// former owner's next append is refused), or a shard's key grant. V8's
// serialization keeps keys and values exact (lone surrogates, Buffers);
// values hold only what the store keeps at rest (sealed data, hashes of
// secrets).
import { deserialize, serialize } from 'node:v8'

/** A key as the replicated stores write them: a string, a number or an array of them. */
export type EffectKey = string | number | (string | number)[]

/**
 * One change: a put (value set), a remove (value absent), every record of a
 * database cleared (a snapshot's start: the auth store's first entry), or a
 * shard's key-file slot (wrapped key, or zeroed).
 */
export type Effect =
  | { db: string; key: EffectKey; value?: unknown; removed?: true }
  | { cleared: string }
  | { slot: number; wrapped: Uint8Array }

/**
 * What a store's recorder shares (the shards' and the auth store's): the
 * effects of the batch being recorded, between start() and take(); none are
 * noted outside a batch.
 */
export class EffectRecording {
  protected effects: Effect[] | undefined

  start(): void {
    this.effects = []
  }

  /** Ends the recording and returns what it saw. */
  take(): Effect[] {
    const effects = this.effects ?? []
    this.effects = undefined
    return effects
  }

  /** How many effects are noted so far: dropAfter(mark) forgets those of a write that was rolled back since. */
  mark(): number {
    return this.effects?.length ?? 0
  }

  dropAfter(mark: number): void {
    if (this.effects !== undefined) this.effects.length = mark
  }
}

/** A data key's key-file slot and its bytes there (wrapped by the KEK): a shard's key grant (workers/actor/replication/apply.ts). */
export interface KeyGrant {
  slot: number
  wrapped: Uint8Array
}

/**
 * One message of a unit's stream, with the host and lease epoch that
 * appended it: a batch's effects (none: an owner's claim), or a key grant,
 * one new data key of a shard in a message of its own so that revoking its
 * consent can erase it from the stream (docs/design/replication.md, "Crypto-shredding
 * across hosts"). The auth store's stream never carries a grant.
 */
export type StreamEntry =
  | { node: string; epoch: number; effects: Effect[] }
  | { node: string; epoch: number; grant: KeyGrant }

export const encodeEntry = (entry: StreamEntry): Uint8Array => serialize(entry)
export const decodeEntry = (data: Uint8Array): StreamEntry => deserialize(data) as StreamEntry
