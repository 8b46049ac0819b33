// The one codec for batches between threads. Measured (bench/codec.ts and
// ../shared/PERFORMANCE-NOTES.md): for batches of a few small requests,
// structured clone of plain objects beats msgpackr buffers, even transferred,
// so the wire form is the batch itself. Both ends call only these two
// functions, so switching to msgpackr is a change of this file alone.
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
