// Reply handlers that keep an answer on the front thread as they pass it on
// (single machine only: kept-answers.ts says what may be kept and for how long).
import type { KeptAnswers } from './kept-answers'
import { wrapping, type ReplyHandler } from './reply-handler'

/** `handler`, after keeping a stamped single answer as text. */
export function keeping(kept: KeptAnswers, shard: number, key: string, handler: ReplyHandler): ReplyHandler {
  return wrapping(handler, (reply) => {
    if (reply.kind === 'ok' && reply.kept !== undefined && reply.body !== undefined) kept.keep(shard, key, reply.body, reply.kept)
    handler(reply)
  })
}

/**
 * `handler`, gathering a neighbourhood's slices to keep the whole as the
 * bytes it then writes, if its last slice says it may be kept. Only one
 * stream of a key gathers at a time, and what all of them gather is
 * bounded (KeptAnswers.gather); `stop` ends the gathering of a stream
 * cancelled before its last slice.
 */
export function keepingStream(kept: KeptAnswers, shard: number, key: string, handler: ReplyHandler): { handler: ReplyHandler; stop: () => void } {
  let slices: Uint8Array[] | undefined = kept.startGathering(key) ? [] : undefined
  const stop = (): void => {
    if (slices !== undefined) kept.stopGathering(key)
    slices = undefined
  }
  return {
    stop,
    handler: wrapping(handler, (reply) => {
      if (reply.kind !== 'chunks') {
        stop()
        handler(reply)
        return
      }
      // The bytes are made here once, and written as they are.
      const bytes = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body
      if (slices !== undefined && !kept.gather(key, bytes.length)) slices = undefined
      if (slices !== undefined && !reply.done) slices.push(bytes)
      if (slices !== undefined && reply.done) {
        const whole = slices.length === 0 ? bytes : Buffer.concat([...slices, bytes])
        stop()
        if (reply.kept !== undefined) kept.keep(shard, key, whole, reply.kept)
      }
      handler({ kind: 'chunks', id: reply.id, body: bytes, done: reply.done, kept: reply.kept })
    }),
  }
}
