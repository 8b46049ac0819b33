// One message of a shard's stream: a batch's effects, or an owner's claim
// (no effects: it moves the stream's last sequence, so a former owner's next
// append is refused). V8's serialization keeps keys and values exact (lone
// surrogates, Buffers) as the store wrote them; values hold only sealed data.
import { deserialize, serialize } from 'node:v8'
import type { Effect } from './recorder'

export interface StreamEntry {
  /** The host and lease epoch that appended it. */
  node: string
  epoch: number
  effects: Effect[]
}

export const encodeEntry = (entry: StreamEntry): Uint8Array => serialize(entry)
export const decodeEntry = (data: Uint8Array): StreamEntry => deserialize(data) as StreamEntry
