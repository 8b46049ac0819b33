// One message of a shard's stream: a batch's effects, an owner's claim (no
// effects: it moves the stream's last sequence, so a former owner's next
// append is refused), or a key grant: one new data key, wrapped by the KEK,
// in a message of its own so that revoking its consent can erase it from the
// stream (docs/cluster.md, "Crypto-shredding across hosts"). V8's
// serialization keeps keys and values exact (lone surrogates, Buffers) as the
// store wrote them; values hold only sealed data.
import { deserialize, serialize } from 'node:v8'
import type { Effect } from './recorder'

/** A data key's key-file slot and its bytes there (wrapped by the KEK). */
export interface KeyGrant {
  slot: number
  wrapped: Uint8Array
}

export type StreamEntry =
  /** The host and lease epoch that appended it. */
  | { node: string; epoch: number; effects: Effect[] }
  | { node: string; epoch: number; grant: KeyGrant }

export const encodeEntry = (entry: StreamEntry): Uint8Array => serialize(entry)
export const decodeEntry = (data: Uint8Array): StreamEntry => deserialize(data) as StreamEntry
