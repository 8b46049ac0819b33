// Turns an actor's reply into the HTTP answer.
import { ApiError } from '../errors'
import type { Exchange } from '../front/exchange'
import type { ActorReply } from '../shard/messages'

/** Count answers carry the number in this header (HEAD has no body). */
export const TOTAL_COUNT_HEADER = 'x-total-count'

export function answer(ex: Exchange): (reply: ActorReply) => void {
  return (reply) => {
    if (reply.kind === 'error') ex.error(new ApiError(reply.type, reply.message))
    else if (reply.kind !== 'ok') ex.error(new Error(`unexpected actor reply ${reply.kind}`))
    else if (reply.body !== undefined) ex.json(reply.status, reply.body)
    else if (reply.total !== undefined) ex.empty(reply.status, { [TOTAL_COUNT_HEADER]: String(reply.total) })
    else ex.empty(reply.status)
  }
}
