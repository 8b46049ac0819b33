// Traces on only (src/telemetry/traces.ts): the span of a call to a shard
// actor, from the moment it is queued for the actor until its reply (a
// stream's last slice). It is a child of the request whose handler made the
// call; its traceparent rides in the call, so the actor's commit span is its
// child (docs/design/tracing.md); the batch the call left in is counted
// when the batch is sent.
import type { ActorReply, ActorRequest } from '../contract/messages'
import type { Attributes, Span, SpanKindName, SpanParent, Traces } from '../telemetry/traces'
import { wrapping, type ReplyHandler } from './reply-handler'

type Call = ActorRequest & { kind: 'call' }

/** The span of each traced call not yet sent, for the size of the batch it leaves in. */
const unsent = new WeakMap<ActorRequest, Span>()

/** A span that ends with the call's reply (a stream's last slice, or an error), as `handler`'s wrapper. */
export function spanUntilReply(t: Traces, span: Span, handler: ReplyHandler): ReplyHandler {
  return wrapping(handler, (reply: ActorReply) => {
    if (reply.kind !== 'chunks' || reply.done) t.end(span, reply.kind === 'error' ? `${reply.type}: ${reply.message}` : undefined)
    handler(reply)
  })
}

/**
 * A call's span under `parent` (the running request's by default; none, no
 * span), its traceparent handed to `carry` (what crosses to the thread or
 * host that answers), ended with the reply.
 */
export function tracedReplies(t: Traces, name: string, kind: SpanKindName, attributes: Attributes, handler: ReplyHandler, carry: (traceparent: string) => void, parent: SpanParent = t.current()): { handler: ReplyHandler; span: Span | undefined } {
  if (parent === undefined) return { handler, span: undefined }
  const span = t.start(name, kind, parent, attributes)
  carry(t.traceparent(span))
  return { handler: spanUntilReply(t, span, handler), span }
}

/** Opens the call's span under the running request's (none outside a request), puts its traceparent in the call, and ends it with the reply. */
export function tracedCall(t: Traces, actor: number, call: Call, handler: ReplyHandler): ReplyHandler {
  const traced = tracedReplies(t, 'actor call', 'client', { 'profile_graph.shard': call.shard, 'profile_graph.actor': actor, 'profile_graph.operation': call.operation.op }, handler, (tp) => { call.trace = tp })
  if (traced.span !== undefined) unsent.set(call, traced.span)
  return traced.handler
}

/** The batch leaves for the actor: each traced call in it learns the batch's size. */
export function batchSent(batch: readonly ActorRequest[]): void {
  for (const req of batch) {
    const span = unsent.get(req)
    if (span === undefined) continue
    unsent.delete(req)
    span.setAttribute('profile_graph.batch_size', batch.length)
  }
}
