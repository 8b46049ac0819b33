// Consents created and revoked, counted where the front thread that took the
// request learns that its actor (here or on the owning host) applied it.
import type { Operation } from '../contract/messages'
import { consentsCreated, consentsRevoked } from '../telemetry/metrics'
import { wrapping, type ReplyHandler } from './reply-handler'

/** `handler`, counting an applied createConsent or revokeConsent; any other call's handler as it is. */
export function countingConsents(operation: Operation, handler: ReplyHandler): ReplyHandler {
  const counter = operation.op === 'createConsent' ? consentsCreated : operation.op === 'revokeConsent' ? consentsRevoked : undefined
  if (counter === undefined) return handler
  return wrapping(handler, (reply) => {
    if (reply.kind === 'ok') counter.inc()
    handler(reply)
  })
}
