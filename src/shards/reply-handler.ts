// What a caller of the actor pool hands in to get its answer, and the
// answers the front thread makes up itself (a 503 for a stopped, restarted
// or overloaded actor).
import type { ActorReply } from '../contract/messages'

export type ReplyHandler = ((reply: ActorReply) => void) & {
  /** true once nobody waits for the answer: a call not yet sent to its actor is then dropped, not applied. */
  abandoned?: () => boolean
  /** The request id of the HTTP request waiting for it (the actor's log records name it): built only when a record needs it. */
  requestId?: () => string
}

/** The handle of an open stream: ask for the next slice, or stop the scan. */
export interface StreamHandle {
  more(): void
  cancel(): void
}

/** The handle of a stream answered whole at once (a kept neighbourhood, a refused call). */
export const NO_STREAM: StreamHandle = { more: () => undefined, cancel: () => undefined }

/** A 503; `notRun`: refused before any of it ran (a cluster host sends the call on to the shard's next owner). */
export const unavailable = (id: number, message: string, notRun = false): ActorReply => ({ kind: 'error', id, type: 'service_unavailable', message, ...(notRun ? { notRun: true as const } : {}) })

/**
 * `onReply` (a function made for this call) as the handler of the call
 * `handler` was given for: a wrapper keeps what the waiting request told,
 * whether it was abandoned and its request id.
 */
export function wrapping(handler: ReplyHandler, onReply: (reply: ActorReply) => void): ReplyHandler {
  const wrapped: ReplyHandler = onReply
  wrapped.abandoned = handler.abandoned
  wrapped.requestId = handler.requestId
  return wrapped
}
