// The routing of a cluster host's calls (src/cluster/forwarding.ts): to its
// own actors, to the owner elsewhere, or, while the shard is between owners,
// to the next owner once there is one; a call refused before it ran goes on
// to the next owner; a 503 only when nobody owns the shard for a lease period.
import t from 'tap'
import { NoRespondersError, RequestError, type NatsConnection } from '@nats-io/nats-core'
import { Forwarding } from '../../../src/cluster/forwarding'
import { decodeCall, encodeReply } from '../../../src/cluster/forward-wire'
import type { ActorReply, Operation, StreamOp } from '../../../src/contract/messages'
import { LeaseMap } from '../../../src/replication/lease-map'
import type { ActorPool } from '../../../src/shards/actor-pool'
import type { ReplyHandler } from '../../../src/shards/reply-handler'
import { sleep } from '../../../bench/wait'

const LEASE_MS = 600
const OK: ActorReply = { kind: 'ok', id: 0, status: 204, body: undefined, total: undefined, kept: undefined }
const notRun = (by: string): ActorReply => ({ kind: 'error', id: 0, type: 'service_unavailable', message: `refused by ${by}`, retryAfter: 1, notRun: true })
const lease = (node: string, epoch = 1): { node: string; url: string; epoch: number } => ({ node, url: `http://${node}`, epoch })
const op = { op: 'putNode' } as unknown as Operation

interface Setup {
  forwarding: Forwarding
  leases: LeaseMap
  /** Calls this host's actors were given, and the answer each got. */
  here: ReplyHandler[]
  /** Hosts the calls were forwarded to, in order. */
  forwardedTo: string[]
  owned: { local: boolean }
  /** What each host answers a forwarded call. */
  answers: Map<string, () => ActorReply>
}

function setup(): Setup {
  const leases = new LeaseMap(LEASE_MS)
  const here: ReplyHandler[] = []
  const forwardedTo: string[] = []
  const answers = new Map<string, () => ActorReply>()
  const owned = { local: false }
  const nc = {
    async request(subject: string, data: Uint8Array) {
      const host = subject.split('.').pop()!
      if (decodeCall(data).tenant !== 'demo') throw new Error('the call was not forwarded as given')
      forwardedTo.push(host)
      const answer = answers.get(host)
      if (answer === undefined) throw new RequestError('no responders', { cause: new NoRespondersError(subject) })
      return { data: encodeReply(answer()) }
    },
  } as unknown as NatsConnection
  const pool = {
    callHere: (_tenant: string, _op: Operation, handler: ReplyHandler) => { here.push(handler) },
    openStreamHere: (_tenant: string, _op: StreamOp, handler: ReplyHandler) => {
      here.push(handler)
      return { more: () => undefined, cancel: () => undefined }
    },
  } as unknown as ActorPool
  const forwarding = new Forwarding({ nc, pool, leases, nodeId: 'me', ownedLocally: () => owned.local, timeoutMs: 2 * LEASE_MS })
  return { forwarding, leases, here, forwardedTo, owned, answers }
}

function answer(f: Forwarding, shard = 0): Promise<ActorReply> {
  return new Promise((resolve) => f.call(shard, 'demo', op, resolve))
}

t.test('a shard owned here is answered by this host\'s actors; one owned elsewhere by its owner', async (t) => {
  const s = setup()
  s.owned.local = true
  const local = answer(s.forwarding)
  t.equal(s.here.length, 1)
  s.here[0]!(OK)
  t.same(await local, OK)
  s.owned.local = false
  s.leases.seen(0, lease('b'))
  s.answers.set('b', () => OK)
  t.same(await answer(s.forwarding), OK)
  t.same(s.forwardedTo, ['b'])
})

t.test('a call that finds no owner waits for the next one rather than answering 503', async (t) => {
  const s = setup()
  s.answers.set('c', () => OK)
  const pending = answer(s.forwarding)
  await sleep(100)
  s.leases.seen(0, lease('c', 2))
  t.same(await pending, OK, 'answered by the owner that came')
  t.same(s.forwardedTo, ['c'])
})

t.test('a call this host\'s actors refused before it ran goes on to the next owner', async (t) => {
  const s = setup()
  s.owned.local = true
  s.leases.seen(0, lease('me'))
  s.answers.set('b', () => OK)
  const pending = answer(s.forwarding)
  s.here[0]!(notRun('me'))
  // The front hears of the hand-over a moment later, then of the next owner: meanwhile the actors refuse again.
  await sleep(60)
  for (const h of s.here.slice(1)) h(notRun('me'))
  t.ok(s.here.length > 1, 'asked again while this host still looks like the owner')
  s.owned.local = false
  s.leases.seen(0, undefined)
  await sleep(60)
  s.leases.seen(0, lease('b', 2))
  t.same(await pending, OK)
  t.same(s.forwardedTo, ['b'])
})

t.test('an owner nobody listens for (it is shutting down) did not run the call: the next owner gets it', async (t) => {
  const s = setup()
  s.leases.seen(0, lease('b'))
  s.answers.set('c', () => OK)
  const pending = answer(s.forwarding)
  await sleep(80)
  s.leases.seen(0, lease('c', 2))
  t.same(await pending, OK)
  t.equal(s.forwardedTo[s.forwardedTo.length - 1], 'c')
})

t.test('a call an owner elsewhere refused before it ran goes on to the owner after it', async (t) => {
  const s = setup()
  s.leases.seen(0, lease('b'))
  s.answers.set('b', () => notRun('b'))
  s.answers.set('c', () => OK)
  const pending = answer(s.forwarding)
  await sleep(80)
  s.leases.seen(0, lease('c', 2))
  t.same(await pending, OK)
  t.equal(s.forwardedTo[0], 'b')
  t.equal(s.forwardedTo[s.forwardedTo.length - 1], 'c')
  t.notOk(s.forwardedTo.slice(1, -1).some((h) => h !== 'b'), 'nobody else asked')
})

t.test('no owner for a whole lease period: 503 with Retry-After', async (t) => {
  const s = setup()
  const started = performance.now()
  const reply = await answer(s.forwarding)
  t.equal(reply.kind, 'error')
  if (reply.kind === 'error') {
    t.equal(reply.type, 'service_unavailable')
    t.equal(reply.retryAfter, 1)
  }
  t.ok(performance.now() - started >= LEASE_MS - 50, 'after the lease period')
  t.same(s.forwardedTo, [])
})

t.test('a refusal that no next owner takes over in time is the answer', async (t) => {
  const s = setup()
  s.leases.seen(0, lease('b'))
  s.answers.set('b', () => notRun('b'))
  const reply = await answer(s.forwarding)
  t.equal(reply.kind, 'error')
  if (reply.kind === 'error') t.equal(reply.type, 'service_unavailable')
})

t.test('an abandoned call waiting for an owner is dropped', async (t) => {
  const s = setup()
  let answered = false
  const handler: ReplyHandler = () => { answered = true }
  let gone = false
  handler.abandoned = () => gone
  s.forwarding.call(0, 'demo', op, handler)
  gone = true
  s.leases.seen(0, lease('b'))
  s.answers.set('b', () => OK)
  await sleep(100)
  t.notOk(answered)
  t.same(s.forwardedTo, [])
})

t.test('a stream that finds its shard between owners opens once this host serves it', async (t) => {
  const s = setup()
  const replies: ActorReply[] = []
  const handle = s.forwarding.openStream(0, 'demo', op as unknown as StreamOp, (r) => replies.push(r))
  await sleep(80)
  t.equal(s.here.length, 0, 'waiting')
  s.owned.local = true
  await sleep(80)
  t.equal(s.here.length, 1, 'opened on this host\'s actors')
  s.here[0]!({ kind: 'chunks', id: 0, body: '[]', done: true, kept: undefined })
  t.equal(replies.length, 1)
  handle.cancel()
})

t.test('a stream with no owner for a lease period: 503', async (t) => {
  const s = setup()
  const reply = await new Promise<ActorReply>((resolve) => s.forwarding.openStream(0, 'demo', op as unknown as StreamOp, resolve))
  t.equal(reply.kind === 'error' ? reply.type : reply.kind, 'service_unavailable')
})
