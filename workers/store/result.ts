// What an operation on a shard answers: a status with an optional JSON body,
// or an error the front thread renders with the one error helper.
import type { ErrorType } from '../../src/core/errors'

export type OpResult =
  | { kind: 'ok'; status: number; body: string | undefined; total: number | undefined; /** see ActorReply */ kept: number | undefined }
  | { kind: 'error'; type: ErrorType; message: string; /** Seconds for Retry-After (cluster mode's 503). */ retryAfter?: number; /** see ActorReply */ notRun?: true }

/**
 * A refusal. The steps of a write (grant, end nodes, preparation) answer
 * their value or this, told apart by `kind` like every result here.
 */
export type OpError = Extract<OpResult, { kind: 'error' }>

export const ok = (status: number, body?: string, total?: number, kept?: number): OpResult => ({ kind: 'ok', status, body, total, kept })
export const fail = (type: ErrorType, message: string): OpError => ({ kind: 'error', type, message })
export const NO_CONTENT = ok(204)
