// Turns an actor's reply into the HTTP answer. The handler has the shape the
// actor pool calls back (ReplyHandler, src/shards/actor-pool.ts); the edge
// states it here rather than import the pool.
import type { ActorReply } from '../contract/messages'
import type { Exchange } from './exchange'
import { replyError } from './stream'

/** Answers the request from the reply; `abandoned` tells the pool nobody waits any more. */
export type Answer = ((reply: ActorReply) => void) & { abandoned: () => boolean; requestId: () => string }

/** Count answers carry the number in this header (HEAD has no body). */
export const TOTAL_COUNT_HEADER = 'x-total-count'

export function answer(ex: Exchange): Answer {
  const handler = ((reply: ActorReply): void => {
    if (reply.kind === 'error') ex.error(replyError(reply))
    else if (reply.kind !== 'ok') ex.error(new Error(`unexpected actor reply ${reply.kind}`))
    else if (reply.body !== undefined) ex.json(reply.status, reply.body)
    else if (reply.total !== undefined) ex.empty(reply.status, { [TOTAL_COUNT_HEADER]: String(reply.total) })
    else ex.empty(reply.status)
  }) as Answer
  // A request whose connection closed before its call left for the actor is
  // not applied (uWebSockets.js closes a connection that pipelines behind an
  // unanswered request: docs/manual/http-edges.md).
  handler.abandoned = () => ex.aborted
  // The id is read (as a string) only by the pool's rare log records: built then, not per request.
  handler.requestId = () => ex.requestId
  return handler
}
