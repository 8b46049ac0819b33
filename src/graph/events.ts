// GET /{tenant}/events?after=&limit=&wait=: the cursor read of the event log
// (DESIGN.md Events), with long-poll: when nothing is newer than `after`, the
// answer waits up to `wait` seconds for the tenant's log to grow.
import { ApiError } from '../errors'
import type { MethodSpec } from '../front/route'
import type { ActorReply } from '../shard/messages'
import { answer } from './answer'
import type { GraphParams } from './params'

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

export const readEvents: MethodSpec<GraphParams> = {
  body: 'none',
  handle(s, ex, { tenant }) {
    const q = ex.query
    const after = integerParam(q, 'after', 0, 0, Number.MAX_SAFE_INTEGER)
    const limit = integerParam(q, 'limit', 100, 1, MAX_LIMIT)
    const wait = integerParam(q, 'wait', 0, 0, MAX_WAIT_S)
    const reply = answer(ex)
    const read = (onReply: (r: ActorReply) => void): void => s.pool.call(tenant, { op: 'readEvents', tenant, after, limit }, onReply)
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
        read(reply)
      }
      const stop = s.pool.onEvents((t) => { if (t === tenant) finish() })
      const timer = setTimeout(finish, wait * 1000)
      ex.onAbort = () => {
        done = true
        clearTimeout(timer)
        stop()
      }
    })
  },
}
