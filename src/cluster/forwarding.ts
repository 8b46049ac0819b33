// Any front serves any request: a call for a shard owned elsewhere goes to its
// owner over NATS request/reply on hostSubject(owner), and this host answers
// the calls other hosts forward to it. The receiving front has already
// authenticated and validated the request; the owner runs the Operation on its
// actors and sends the ActorReply back (a stream: one message per slice). No
// valid owner, or an owner that does not answer: 503 with Retry-After of one
// lease period, never a stale answer from a standby copy.
import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core'
import { hostSubject } from '../contract/cluster-names'
import type { ActorReply, Operation, StreamOp } from '../contract/messages'
import { log } from '../telemetry/log'
import { clusterForwarded } from '../telemetry/metrics'
import type { ActorPool, ReplyHandler, StreamHandle } from '../shards/actor-pool'
import type { RemoteShards } from '../shards/remote-shards'
import { decodeCall, decodeReply, encodeCall, encodeReply, type ForwardedCall } from './forward-wire'
import type { LeaseMap } from '../replication/lease-map'

/** How often a forwarded call checks that its owner's lease is still believed. */
const OWNER_CHECK_MS = 100

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

  private unavailable(why: string): ActorReply & { kind: 'error' } {
    return { kind: 'error', id: 0, type: 'service_unavailable', message: why, retryAfter: this.o.leases.retryAfterSeconds() }
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

  call(shard: number, tenant: string, operation: Operation, handler: ReplyHandler): void {
    const subject = this.ownerSubject(shard)
    if (typeof subject !== 'string') {
      clusterForwarded.inc({ outcome: 'no_owner' })
      handler(subject)
      return
    }
    // An owner whose lease stops being believed (it died, or handed the shard over) will not answer: 503 then, not at the timeout.
    const owner = this.o.leases.owner(shard)
    let answered = false
    const finish = (reply: ActorReply): void => {
      if (answered) return
      answered = true
      clearInterval(watch)
      handler(reply)
    }
    const watch = setInterval(() => {
      if (this.o.leases.owner(shard) !== owner) {
        clusterForwarded.inc({ outcome: 'unanswered' })
        finish(this.unavailable(`the owner of shard ${shard} lost its lease while a forwarded call waited; retry after the lease period`))
      }
    }, OWNER_CHECK_MS)
    this.o.nc.request(subject, encodeCall({ shard, tenant, operation, stream: false }), { timeout: this.o.timeoutMs }).then((msg) => {
      if (!answered) clusterForwarded.inc({ outcome: 'answered' })
      finish(decodeReply(msg.data))
    }, (err: unknown) => {
      if (answered) return
      clusterForwarded.inc({ outcome: 'unanswered' })
      log.warn({ err, shard, requestId: handler.requestId?.() }, `cluster: the owner of shard ${shard} did not answer a forwarded call`)
      finish(this.unavailable(`the owner of shard ${shard} did not answer; retry after the lease period`))
    })
  }

  openStream(shard: number, tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle {
    const subject = this.ownerSubject(shard)
    const none: StreamHandle = { more: () => undefined, cancel: () => undefined }
    if (typeof subject !== 'string') {
      clusterForwarded.inc({ outcome: 'no_owner' })
      handler(subject)
      return none
    }
    const inbox = createInbox()
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
    this.o.nc.publish(subject, encodeCall({ shard, tenant, operation, stream: true }), { reply: inbox })
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
      msg.respond(encodeReply(this.unavailable(`shard ${call.shard} is not served by ${this.o.nodeId} any more; retry after the lease period`)))
      return
    }
    const respond = (reply: ActorReply): void => { msg.respond(encodeReply(reply)) }
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
