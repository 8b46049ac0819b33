// Any front serves any request: a call for a shard owned elsewhere goes to its
// owner over NATS request/reply on hostSubject(owner), and this host answers
// the calls other hosts forward to it. The receiving front has already
// authenticated and validated the request; the owner runs the Operation on its
// actors and sends the ActorReply back (a stream: one message per slice).
// A call that finds its shard between owners (a hand-over, a failover) waits
// for the next one for up to a lease period, and a call its owner refused
// before running any of it (notRun: the shard moved meanwhile) goes on to the
// next owner: a planned hand-over costs latency, not errors. No owner within
// that time, or an owner that does not answer: 503 with Retry-After of one
// lease period, never a stale answer from a standby copy.
import { createInbox, RequestError, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core'
import { hostSubject } from '../contract/cluster-names'
import type { ActorReply, Operation, StreamOp } from '../contract/messages'
import { log } from '../telemetry/log'
import { clusterForwarded } from '../telemetry/metrics'
import type { ActorPool, ReplyHandler, StreamHandle } from '../shards/actor-pool'
import type { RemoteShards } from '../shards/remote-shards'
import { decodeCall, decodeReply, encodeCall, encodeReply, type ForwardedCall } from './forward-wire'
import type { LeaseMap } from '../replication/lease-map'
import type { LeaseValue } from '../contract/cluster-names'
import { wrapping } from '../shards/reply-handler'
import { spanUntilReply, tracedReplies } from '../shards/call-spans'
import { traces } from '../telemetry/traces'

/** How often a forwarded call checks that its owner's lease is still believed. */
const OWNER_CHECK_MS = 100
/** How often a call waiting for its shard's next owner looks again. */
const OWNER_WAIT_STEP_MS = 25
/** How long a forwarded call still waits for its answer once its owner's lease is no longer believed. */
const LOST_OWNER_GRACE_MS = 500
/** Calls waiting for an owner at most at once; more are answered 503 at once (memory stays bounded). */
const MAX_WAITING = 10_000

/** Whether this host serves `shard` now (its actors hold a valid lease). */
export type OwnedLocally = (shard: number) => boolean

export interface ForwardingOptions {
  nc: NatsConnection
  pool: ActorPool
  leases: LeaseMap
  nodeId: string
  ownedLocally: OwnedLocally
  /** How long a forwarded call may wait for its owner's answer (and a stream for each slice). */
  timeoutMs: number
}

export class Forwarding implements RemoteShards {
  private subscription: Subscription | undefined

  constructor(private readonly o: ForwardingOptions) {}

  /** The 503 of a call without an owner; `notRun`: refused before any of it ran, so the sender may go on to the next owner. */
  private unavailable(why: string, notRun = false): ActorReply & { kind: 'error' } {
    const reply: ActorReply & { kind: 'error' } = { kind: 'error', id: 0, type: 'service_unavailable', message: why, retryAfter: this.o.leases.retryAfterSeconds() }
    if (notRun) reply.notRun = true
    return reply
  }

  elsewhere(shard: number): boolean {
    return !this.o.ownedLocally(shard)
  }

  /** The owner's subject, or the 503 to answer with when there is none that is not this host. */
  private ownerSubject(shard: number): string | ActorReply & { kind: 'error' } {
    const owner = this.o.leases.owner(shard)
    // This host named but not serving: its lease is being lost or not yet taken; the next lease period settles it.
    if (owner === undefined || owner.node === this.o.nodeId) return this.unavailable(`shard ${shard} has no owner now (it is moving between hosts); retry after the lease period`)
    return hostSubject(owner.node)
  }

  private waiting = 0

  /** A call of `shard`, wherever it is served now: by this host's actors, by its owner elsewhere, or by the next owner. */
  call(shard: number, tenant: string, operation: Operation, handler: ReplyHandler): void {
    this.route(shard, tenant, operation, handler, performance.now() + this.o.leases.leaseMs)
  }

  private route(shard: number, tenant: string, operation: Operation, handler: ReplyHandler, deadline: number): void {
    if (handler.abandoned?.() === true) return
    // Refused before it ran (the shard is moving): asked again in a moment, of whoever serves it by then, until the deadline.
    const orNext = wrapping(handler, (reply) => {
      if (reply.kind === 'error' && reply.notRun === true && performance.now() < deadline) this.wait(shard, tenant, operation, handler, deadline)
      else handler(reply)
    })
    if (this.o.ownedLocally(shard)) {
      this.o.pool.callHere(tenant, operation, orNext)
      return
    }
    const owner = this.o.leases.owner(shard)
    if (owner !== undefined && owner.node !== this.o.nodeId) {
      this.forward(shard, owner, tenant, operation, orNext)
      return
    }
    this.wait(shard, tenant, operation, handler, deadline)
  }

  /** Routes the call again in a moment, until `deadline`; then the 503. */
  private wait(shard: number, tenant: string, operation: Operation, handler: ReplyHandler, deadline: number): void {
    if (performance.now() >= deadline || this.waiting >= MAX_WAITING) {
      clusterForwarded.inc({ outcome: 'no_owner' })
      handler(this.unavailable(`shard ${shard} has no owner now (it is moving between hosts); retry after the lease period`))
      return
    }
    this.waiting++
    setTimeout(() => {
      this.waiting--
      this.route(shard, tenant, operation, handler, deadline)
    }, OWNER_WAIT_STEP_MS)
  }

  /** Traces on: the forwarding span (under the request's) of a call sent to `host`, its traceparent in the call. */
  private traced(call: ForwardedCall, host: string, handler: ReplyHandler): ReplyHandler {
    const t = traces
    if (t === undefined) return handler
    return tracedReplies(t, 'cluster forward', 'client', { 'profile_graph.shard': call.shard, 'profile_graph.host': host }, handler, (tp) => { call.trace = tp }).handler
  }

  private forward(shard: number, owner: LeaseValue, tenant: string, operation: Operation, handler: ReplyHandler): void {
    const subject = hostSubject(owner.node)
    const call: ForwardedCall = { shard, tenant, operation, stream: false }
    handler = this.traced(call, owner.node, handler)
    // An owner whose lease stops being believed (it died, or handed the shard over) will not answer: 503 then, not at the timeout.
    let answered = false
    const finish = (reply: ActorReply): void => {
      if (answered) return
      answered = true
      clearInterval(watch)
      handler(reply)
    }
    // A host handing the shard over answers what it had queued just before it lets the lease go: a moment's grace.
    let changedAt: number | undefined
    const watch = setInterval(() => {
      if (this.o.leases.owner(shard) === owner) return
      changedAt ??= performance.now()
      if (performance.now() - changedAt >= LOST_OWNER_GRACE_MS) {
        clusterForwarded.inc({ outcome: 'unanswered' })
        finish(this.unavailable(`the owner of shard ${shard} lost its lease while a forwarded call waited; retry after the lease period`))
      }
    }, OWNER_CHECK_MS)
    this.o.nc.request(subject, encodeCall(call), { timeout: this.o.timeoutMs }).then((msg) => {
      if (!answered) clusterForwarded.inc({ outcome: 'answered' })
      finish(decodeReply(msg.data))
    }, (err: unknown) => {
      if (answered) return
      // Nobody listens on the owner's subject (it is shutting down, or not started yet): the call was not run.
      if (err instanceof RequestError && err.isNoResponders()) {
        finish(this.unavailable(`the owner of shard ${shard} did not take the call; retry after the lease period`, true))
        return
      }
      clusterForwarded.inc({ outcome: 'unanswered' })
      log.warn({ err, shard, requestId: handler.requestId?.() }, `cluster: the owner of shard ${shard} did not answer a forwarded call`)
      finish(this.unavailable(`the owner of shard ${shard} did not answer; retry after the lease period`))
    })
  }

  /** A stream of a shard this host does not serve: from its owner, or from the next owner once there is one (within a lease period). */
  openStream(shard: number, tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle {
    const subject = this.ownerSubject(shard)
    if (typeof subject === 'string') return this.forwardStream(shard, subject, tenant, operation, handler)
    const deadline = performance.now() + this.o.leases.leaseMs
    let opened: StreamHandle | undefined
    let cancelled = false
    const look = (): void => {
      if (cancelled || handler.abandoned?.() === true) return
      if (this.o.ownedLocally(shard)) {
        opened = this.o.pool.openStreamHere(tenant, operation, handler)
        return
      }
      const next = this.ownerSubject(shard)
      if (typeof next === 'string') opened = this.forwardStream(shard, next, tenant, operation, handler)
      else if (performance.now() < deadline) setTimeout(look, OWNER_WAIT_STEP_MS)
      else {
        clusterForwarded.inc({ outcome: 'no_owner' })
        handler(next)
      }
    }
    setTimeout(look, OWNER_WAIT_STEP_MS)
    return {
      more: () => opened?.more(),
      cancel: () => {
        cancelled = true
        opened?.cancel()
      },
    }
  }

  private forwardStream(shard: number, subject: string, tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle {
    const inbox = createInbox()
    const call: ForwardedCall = { shard, tenant, operation, stream: true }
    handler = this.traced(call, subject, handler)
    let finished = false
    let timer: NodeJS.Timeout | undefined
    const finish = (reply: ActorReply | undefined): void => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      sub.unsubscribe()
      if (reply !== undefined) handler(reply)
    }
    const waitForNext = (): void => {
      clearTimeout(timer)
      timer = setTimeout(() => finish(this.unavailable(`the owner of shard ${shard} stopped answering a forwarded stream`)), this.o.timeoutMs)
    }
    // The owner streams slices as fast as it reads them: the back-pressure of a local scan ends at the NATS hop (docs/manual/cluster.md).
    const sub = this.o.nc.subscribe(inbox, {
      callback: (err, msg) => {
        if (finished) return
        if (err !== null) {
          finish(this.unavailable(`a forwarded stream failed: ${err.message}`))
          return
        }
        const reply = decodeReply(msg.data)
        if (reply.kind === 'chunks' && !reply.done) {
          waitForNext()
          handler(reply)
        } else finish(reply)
      },
    })
    clusterForwarded.inc({ outcome: 'stream' })
    this.o.nc.publish(subject, encodeCall(call), { reply: inbox })
    waitForNext()
    return { more: () => undefined, cancel: () => finish(undefined) }
  }

  /** Answers the calls other hosts forward to this one. */
  serve(): void {
    this.subscription = this.o.nc.subscribe(hostSubject(this.o.nodeId), { callback: (err, msg) => { if (err === null) this.answer(msg) } })
  }

  private answer(msg: Msg): void {
    let call: ForwardedCall
    try {
      call = decodeCall(msg.data)
    } catch (err) {
      log.error({ err }, 'cluster: a forwarded call could not be read')
      return
    }
    // Owned by the time it arrives, or refused: never a second forward (no loops), never a standby's answer.
    if (!this.o.ownedLocally(call.shard)) {
      msg.respond(encodeReply(this.unavailable(`shard ${call.shard} is not served by ${this.o.nodeId} any more; retry after the lease period`, true)))
      return
    }
    let respond: ReplyHandler = (reply: ActorReply): void => { msg.respond(encodeReply(reply)) }
    // Traces on and the sender's span named: this host's part is its child, and its actor call that span's.
    const t = traces
    if (t === undefined || call.trace === undefined) {
      this.serveCall(call, respond)
      return
    }
    const span = t.start('forwarded call', 'server', call.trace, { 'profile_graph.shard': call.shard })
    respond = spanUntilReply(t, span, respond)
    t.within(span, () => this.serveCall(call, respond))
  }

  private serveCall(call: ForwardedCall, respond: ReplyHandler): void {
    if (!call.stream) {
      this.o.pool.callHere(call.tenant, call.operation, respond)
      return
    }
    const handle = this.o.pool.openStreamHere(call.tenant, call.operation as StreamOp, (reply) => {
      respond(reply)
      if (reply.kind === 'chunks' && !reply.done) handle.more()
    })
  }

  async close(): Promise<void> {
    await this.subscription?.drain()
  }
}
