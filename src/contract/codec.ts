// The one codec for batches between threads. Measured with bench/codec.ts
// (MessageChannel round trips to a worker, 2-core machine): structured clone
// of the plain batch beats msgpackr with records for the batch sizes the
// front thread sends (1 to ~13 per event-loop turn): 56k vs 26k requests/s
// at 1, 193k vs 161k at 8; msgpackr wins only from ~32 per batch (425k vs
// 213k). So the wire form is the batch itself. Both ends call only these
// functions, so switching (or choosing by batch size) changes this file alone.
// Measured again with msgpackr's structures shared over the channel
// (`sequential`, bench/codec.ts; a busy machine, three runs): at 8 per batch
// 198-265k vs structured clone's 43-77k requests/s, at 1 29-41k vs 14-53k.
// Kept structured clone all the same: msgpackr writes a lone surrogate as
// U+FFFD, and ids and values with lone surrogates are stored and read back
// exactly (key-encoding.ts), which structured clone preserves.
import type { ActorReply, ActorRequest } from './messages'

export type RequestBatch = ActorRequest[]
export type ReplyBatch = ActorReply[]

export function encodeRequests(batch: RequestBatch): unknown {
  return batch
}
export function decodeRequests(wire: unknown): RequestBatch {
  return wire as RequestBatch
}
export function encodeReplies(batch: ReplyBatch): unknown {
  return batch
}
export function decodeReplies(wire: unknown): ReplyBatch {
  return wire as ReplyBatch
}
