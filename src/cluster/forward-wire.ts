// The wire format of forwarded calls between hosts (docs/manual/cluster.md): the
// already authenticated and validated Operation, and the owner's ActorReply
// back, in V8's serialization, which is the structured clone the actors'
// channel uses (it keeps lone surrogates in ids and values exact).
import { deserialize, serialize } from 'node:v8'
import type { ActorReply, Operation } from '../contract/messages'

export interface ForwardedCall {
  shard: number
  tenant: string
  operation: Operation
  /** A stream: the owner sends every slice as its own message, the last with done. */
  stream: boolean
  /** Traces on only: the traceparent of the sender's forwarding span (docs/design/tracing.md). */
  trace?: string
}

export const encodeCall = (call: ForwardedCall): Uint8Array => serialize(call)
export const decodeCall = (data: Uint8Array): ForwardedCall => deserialize(data) as ForwardedCall
export const encodeReply = (reply: ActorReply): Uint8Array => serialize(reply)
export const decodeReply = (data: Uint8Array): ActorReply => deserialize(data) as ActorReply
