// Replies to the front thread, batched: every reply of one event-loop turn
// goes in one message (the front thread batches its requests the same way).
import type { MessagePort } from 'node:worker_threads'
import { encodeReplies } from '../../src/contract/codec'
import type { ActorReply } from '../../src/contract/messages'
import type { OpResult } from '../store/result'
import { logError } from './log'

export function reply(id: number, r: OpResult): ActorReply {
  return r.kind === 'ok'
    ? { kind: 'ok', id, status: r.status, body: r.body, total: r.total, kept: r.kept }
    : r.retryAfter === undefined ? { kind: 'error', id, type: r.type, message: r.message }
    : { kind: 'error', id, type: r.type, message: r.message, retryAfter: r.retryAfter, ...(r.notRun === true ? { notRun: true as const } : {}) }
}

export function internal(id: number, err: unknown): ActorReply {
  logError(`shard actor: request ${id} failed`, err, [id])
  return { kind: 'error', id, type: 'internal_error', message: 'internal error' }
}

export class Outbox {
  private batch: ActorReply[] = []
  private scheduled = false

  constructor(private readonly port: MessagePort) {}

  send(r: ActorReply): void {
    this.batch.push(r)
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => this.flush())
  }

  flush(): void {
    this.scheduled = false
    const batch = this.batch
    this.batch = []
    if (batch.length === 0) return
    try {
      this.port.postMessage(encodeReplies(batch))
    } catch {
      // A reply structured clone refuses must not lose the others: one by one, the bad ones become errors.
      for (const r of batch) {
        try {
          this.port.postMessage(encodeReplies([r]))
        } catch (err) {
          this.port.postMessage(encodeReplies([internal(r.id, err)]))
        }
      }
    }
  }
}
