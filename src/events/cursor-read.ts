// The cursor read of an event log with long-poll (HTTP), shared by the graph's
// GET /{tenant}/events and the authorization service's GET /oauth2/v1/events
// (one implementation): events with sequence > after, at most `limit`; when
// there are none, wait up to `wait` seconds for the log to grow.
import { ApiError } from '../core/errors'
import type { Exchange } from '../http/exchange'
import { onDrain } from '../http/in-flight'
import type { ActorPool } from '../shards/actor-pool'
import { answer } from '../http/answer'
import type { ActorReply } from '../contract/messages'

export const MAX_LIMIT = 1000
export const MAX_WAIT_S = 30

function integerParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name)
  if (raw === null) return fallback
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ApiError('bad_request', `${name} must be a whole number from ${min} to ${max}, got "${raw}"`)
  }
  return Number(raw)
}

/** Answers one page of the log `log`; `rewrite` may change the page body (deprecated payload versions). */
export function serveEventPage(s: { pool: ActorPool }, ex: Exchange, log: string, rewrite?: (body: string) => string): void {
  const q = ex.query
  const after = integerParam(q, 'after', 0, 0, Number.MAX_SAFE_INTEGER)
  const limit = integerParam(q, 'limit', 100, 1, MAX_LIMIT)
  const wait = integerParam(q, 'wait', 0, 0, MAX_WAIT_S)
  const send = answer(ex)
  const reply = (r: ActorReply): void => {
    if (rewrite !== undefined && r.kind === 'ok' && r.body !== undefined) send({ ...r, body: rewrite(r.body) })
    else send(r)
  }
  const read = (onReply: (r: ActorReply) => void): void => s.pool.call(log, { op: 'readEvents', tenant: log, after, limit }, onReply)
  read((first) => {
    const empty = first.kind === 'ok' && first.body !== undefined && first.body.startsWith('{"events":[]')
    if (!empty || wait === 0 || !ex.open) {
      reply(first)
      return
    }
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      stop()
      unhook()
      read(reply)
    }
    const stop = s.pool.onEvents((t) => { if (t === log) finish() })
    const timer = setTimeout(finish, wait * 1000)
    // A shutdown answers the wait at once (an empty page) rather than cut it.
    const unhook = onDrain(finish)
    ex.onAbort = () => {
      done = true
      clearTimeout(timer)
      stop()
      unhook()
    }
  })
}
