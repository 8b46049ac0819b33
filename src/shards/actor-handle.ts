// One shard actor as the front thread sees it: its current thread, the calls
// waiting for their reply, and the requests of this event-loop turn, sent to
// the thread as one message.
import type { Worker } from 'node:worker_threads'
import { encodeRequests } from '../contract/codec'
import type { ActorReply, ActorRequest } from '../contract/messages'
import { log } from '../telemetry/log'
import { traces } from '../telemetry/traces'
import { batchSent, tracedCall } from './call-spans'
import { unavailable, type ReplyHandler } from './reply-handler'

export class ActorHandle {
  worker!: Worker
  readonly pending = new Map<number, ReplyHandler>()
  private outbox: ActorRequest[] = []
  private scheduled = false
  /** Between the thread's `started` and its exit. */
  up = false
  /** Why the actor was stopped for good (its shards answer 503), or undefined while it runs. */
  stopped: string | undefined
  /** This incarnation has opened the other actors' shards for reading (it may take their reads). */
  readersOpen = false
  /** Set while this incarnation opens the other shards for reading: a thread terminated inside LMDB's native open aborts the whole process. */
  openingReaders: Promise<void> | undefined

  constructor(readonly index: number) {}

  /** A new thread for this actor: what the last one had opened for reading went with it. */
  attach(worker: Worker): void {
    this.worker = worker
    this.readersOpen = false
    this.openingReaders = undefined
  }

  /** A reply to a call, to its handler; the call ends with its only reply, or a stream's last slice. */
  deliver(reply: ActorReply): void {
    const handler = this.pending.get(reply.id)
    if (handler === undefined) return
    if (reply.kind !== 'chunks' || reply.done) this.pending.delete(reply.id)
    // A handler that throws must not take the other replies, or the process, with it.
    try {
      handler(reply)
    } catch (err) {
      log.error({ err, actor: this.index, requestId: handler.requestId?.() }, `shard actor ${this.index}: handling the reply to request ${reply.id} failed`)
    }
  }

  /** The thread exited: everything in flight, and everything queued for it, gets a 503 saying `why` (`notRun`: none of it ran). */
  failAll(why: string, notRun = false): void {
    const lost = [...this.pending.entries()]
    this.pending.clear()
    this.outbox = []
    for (const [id, handler] of lost) handler(unavailable(id, why, notRun))
  }

  unavailable(): string {
    return `this tenant's shard is stopped (${this.stopped ?? ''}); an operator must repair it and restart the server`
  }

  send(req: ActorRequest, handler: ReplyHandler | undefined): void {
    if (this.stopped !== undefined) {
      handler?.(unavailable(req.id, this.unavailable()))
      return
    }
    if (handler !== undefined) {
      const t = traces
      this.pending.set(req.id, t === undefined || req.kind !== 'call' ? handler : tracedCall(t, this.index, req, handler))
    }
    this.outbox.push(req)
    if (!this.scheduled) {
      this.scheduled = true
      // setImmediate, not a microtask: uWebSockets.js drains microtasks after
      // every request, which would send batches of one.
      setImmediate(() => this.flush())
    }
  }

  private flush(): void {
    this.scheduled = false
    if (this.outbox.length === 0) return
    const batch = this.outbox.filter((req) => !this.dropAbandoned(req))
    this.outbox = []
    if (batch.length === 0) return
    if (traces !== undefined) batchSent(batch)
    try {
      this.worker.postMessage(encodeRequests(batch))
    } catch {
      // Structured clone refused the batch (a value nested too deep for the
      // stack, say): send the requests one by one so only the bad ones fail.
      for (const req of batch) this.sendAlone(req)
    }
  }

  private dropAbandoned(req: ActorRequest): boolean {
    if (req.kind !== 'call') return false
    if (this.pending.get(req.id)?.abandoned?.() !== true) return false
    this.pending.delete(req.id)
    return true
  }

  private sendAlone(req: ActorRequest): void {
    try {
      this.worker.postMessage(encodeRequests([req]))
    } catch (err) {
      log.error({ err, actor: this.index, requestId: this.pending.get(req.id)?.requestId?.() }, `shard actor ${this.index}: request ${req.id} could not be passed to the actor`)
      const handler = this.pending.get(req.id)
      this.pending.delete(req.id)
      handler?.({ kind: 'error', id: req.id, type: 'bad_request', message: 'the request could not be passed to its shard: its body is too deeply nested or not serializable' })
    }
  }
}
