// Traces across hosts (src/cluster/forwarding.ts, docs/design/tracing.md):
// a call forwarded under a request's span gets a `cluster forward` span whose
// traceparent rides in the call; the owner serves it inside a `forwarded
// call` span, the sender's child, under which its actor call is made. Spans
// go to an OTLP receiver in this process; NATS is a stand-in.
import t from 'tap'
import type { NatsConnection } from '@nats-io/nats-core'
import { Forwarding } from '../../../src/cluster/forwarding'
import { decodeCall, decodeReply, encodeCall, encodeReply, type ForwardedCall } from '../../../src/cluster/forward-wire'
import type { ActorReply, Operation } from '../../../src/contract/messages'
import { LeaseMap } from '../../../src/replication/lease-map'
import type { ActorPool } from '../../../src/shards/actor-pool'
import type { ReplyHandler } from '../../../src/shards/reply-handler'
import { startTraces, stopTraces, traces, type Span } from '../../../src/telemetry/traces'
import { OtlpReceiver } from '../../helpers/otlp-receiver'

const OK: ActorReply = { kind: 'ok', id: 0, status: 204, body: undefined, total: undefined, kept: undefined }
const op = { op: 'putNode' } as unknown as Operation
const receiver = new OtlpReceiver()

t.before(async () => {
  await receiver.start()
  // The SDK reads these when it starts.
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = receiver.url
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50'
  await startTraces({ protocol: 'http/json' }, 'front', (message) => { throw new Error(message) })
})
t.teardown(async () => {
  await stopTraces()
  await receiver.stop()
})

/** A host that forwards every call of shard 0 to host b, and keeps what it sent. */
function sender(sent: ForwardedCall[]): Forwarding {
  const nc = {
    async request(_subject: string, data: Uint8Array) {
      sent.push(decodeCall(data))
      return { data: encodeReply(OK) }
    },
  } as unknown as NatsConnection
  const leases = new LeaseMap(600)
  leases.seen(0, { node: 'b', url: 'http://b', epoch: 1 })
  return new Forwarding({ nc, pool: {} as ActorPool, leases, nodeId: 'a', ownedLocally: () => false, timeoutMs: 2000 })
}

t.test('the forwarded call carries its span\'s traceparent; the owner serves it in a child span', async (t) => {
  const tr = traces!
  const sent: ForwardedCall[] = []
  const request = tr.start('PUT /graph/v1/:tenant/nodes/:ns/:type/:id', 'server', undefined)
  const reply = await new Promise<ActorReply>((resolve) => tr.within(request, () => sender(sent).call(0, 'demo', op, resolve)))
  tr.end(request)
  t.same(reply, OK)
  const parent = /^00-([\da-f]{32})-([\da-f]{16})-01$/.exec(sent[0]?.trace ?? '')
  t.ok(parent, 'a traceparent in the call')
  t.equal(parent![1], request.spanContext().traceId, 'in the request\'s trace')

  // The owner: its subscription gets the call, its pool the actor call.
  let deliver: ((err: Error | null, msg: unknown) => void) | undefined
  const ownerNc = { subscribe: (_subject: string, opts: { callback: typeof deliver }) => { deliver = opts.callback; return { drain: async () => undefined } } } as unknown as NatsConnection
  let underSpan: Span | undefined
  let actorReply: ReplyHandler | undefined
  const pool = { callHere: (_tenant: string, _op: Operation, handler: ReplyHandler) => { underSpan = traces?.current(); actorReply = handler } } as unknown as ActorPool
  const owner = new Forwarding({ nc: ownerNc, pool, leases: new LeaseMap(600), nodeId: 'b', ownedLocally: () => true, timeoutMs: 2000 })
  owner.serve()
  const responses: ActorReply[] = []
  deliver!(null, { data: encodeCall(sent[0]!), respond: (data: Uint8Array) => responses.push(decodeReply(data)) })
  t.ok(underSpan, 'the owner\'s actor call is made under a span')
  actorReply!(OK)
  t.same(responses, [OK], 'answered as before')

  const forward = await receiver.span((s) => s.name === 'cluster forward', 'the sender\'s span')
  t.equal(forward.parentSpanId, request.spanContext().spanId, 'a child of the request')
  t.equal(forward.spanId, parent![2], 'the one the call names')
  t.match(forward.attributes, { 'profile_graph.shard': 0, 'profile_graph.host': 'b' })
  const served = await receiver.span((s) => s.name === 'forwarded call', 'the owner\'s span')
  t.equal(served.parentSpanId, forward.spanId, 'the owner\'s part is the sender\'s child')
  t.equal(served.kind, 2, 'a server span')
  t.equal(underSpan!.spanContext().spanId, served.spanId)
})

t.test('a call outside any request crosses without a trace', async (t) => {
  const sent: ForwardedCall[] = []
  await new Promise<ActorReply>((resolve) => sender(sent).call(0, 'demo', op, resolve))
  t.equal(sent[0]?.trace, undefined)
})
