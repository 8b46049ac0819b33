// Turns an actor's reply into the HTTP answer.
import { ApiError } from '../errors'
import type { Exchange } from '../front/exchange'
import type { ReplyHandler } from './actor-pool'

/** Count answers carry the number in this header (HEAD has no body). */
export const TOTAL_COUNT_HEADER = 'x-total-count'

export function answer(ex: Exchange): ReplyHandler {
  const handler: ReplyHandler = (reply) => {
    if (reply.kind === 'error') ex.error(new ApiError(reply.type, reply.message))
    else if (reply.kind !== 'ok') ex.error(new Error(`unexpected actor reply ${reply.kind}`))
    else if (reply.body !== undefined) ex.json(reply.status, reply.body)
    else if (reply.total !== undefined) ex.empty(reply.status, { [TOTAL_COUNT_HEADER]: String(reply.total) })
    else ex.empty(reply.status)
  }
  // A request whose connection closed before its call left for the actor is
  // not applied (uWebSockets.js closes a connection that pipelines behind an
  // unanswered request: README, "HTTP edges").
  handler.abandoned = () => ex.aborted
  return handler
}
