// The one codec for batches between threads. Measured with bench/codec.ts
// (MessageChannel round trips to a worker, 2-core machine): structured clone
// of the plain batch beats msgpackr with records for the batch sizes the
// front thread sends (1 to ~13 per event-loop turn): 56k vs 26k requests/s
// at 1, 193k vs 161k at 8; msgpackr wins only from ~32 per batch (425k vs
// 213k). So the wire form is structured clone of an array. Both ends call
// only these functions, so switching (or choosing by batch size) changes
// this file alone.
// Measured again with msgpackr's structures shared over the channel
// (`sequential`, bench/codec.ts; a busy machine, three runs): at 8 per batch
// 198-265k vs structured clone's 43-77k requests/s, at 1 29-41k vs 14-53k.
// Kept structured clone all the same: msgpackr writes a lone surrogate as
// U+FFFD, and ids and values with lone surrogates are stored and read back
// exactly (key-encoding.ts), which structured clone preserves.
//
// The hot messages (a plain `ok` reply, and the calls of the graph's single
// reads and writes) cross as flat runs of values in the batch array, not as
// objects: structured clone writes every key of every object and the other
// side rebuilds each object key by key, which cost more instructions on the
// front thread than building the same objects in JS (bench/MEASUREMENTS.md,
// "The front thread's cost per request", 2026-11-25). A run starts with a number (a call's or
// reply's id); any other message crosses as itself, an object.
import type { NodeRef, Operation, RelationRef, Timing, WriteContext, ActorReply, ActorRequest } from './messages'

export type RequestBatch = ActorRequest[]
export type ReplyBatch = ActorReply[]

type Wire = unknown[]

/** Codes of the calls that cross flat; the values after them are in the order their writer pushes them. */
const GET_NODE = 0
const PUT_NODE = 1
const GET_RELATION = 2
const PUT_RELATION = 3
const INCREMENT_COUNTER = 4

function pushNode(out: Wire, n: NodeRef): void {
  out.push(n.ns, n.type, n.id)
}

function pushRelation(out: Wire, r: RelationRef): void {
  pushNode(out, r.from)
  pushNode(out, r.to)
  pushNode(out, r.rel)
}

function pushContext(out: Wire, c: WriteContext): void {
  out.push(c.consent, c.client, c.trace, c.schedule, c.decay)
}

/** Pushes a call's operation flat after its code; false for an operation that crosses as an object. */
function pushOperation(out: Wire, o: Operation): boolean {
  switch (o.op) {
    case 'getNode':
      out.push(GET_NODE, o.tenant)
      pushNode(out, o.node)
      return true
    case 'putNode':
      out.push(PUT_NODE, o.tenant)
      pushNode(out, o.node)
      out.push(o.props)
      pushContext(out, o.ctx)
      return true
    case 'getRelation':
      out.push(GET_RELATION, o.tenant)
      pushRelation(out, o.relation)
      return true
    case 'putRelation':
      out.push(PUT_RELATION, o.tenant)
      pushRelation(out, o.relation)
      out.push(o.props)
      pushContext(out, o.ctx)
      return true
    case 'incrementCounter':
      out.push(INCREMENT_COUNTER, o.tenant)
      pushRelation(out, o.relation)
      out.push(o.name)
      pushContext(out, o.ctx)
      return true
    default:
      return false
  }
}

/** Reads a wire array from the front; each read takes the next value. */
class Reader {
  i = 0
  constructor(readonly wire: Wire) {}
  get more(): boolean {
    return this.i < this.wire.length
  }
  /** Whether the next value starts a flat run (a number) rather than being a message object. */
  get flat(): boolean {
    return typeof this.wire[this.i] === 'number'
  }
  value<T>(): T {
    return this.wire[this.i++] as T
  }
  node(): NodeRef {
    return { ns: this.value<string>(), type: this.value<string>(), id: this.value<string>() }
  }
  relation(): RelationRef {
    return { from: this.node(), to: this.node(), rel: this.node() }
  }
  context(): WriteContext {
    return {
      consent: this.value<string>(),
      client: this.value<string>(),
      trace: this.value<string | undefined>(),
      schedule: this.value<Timing | undefined>(),
      decay: this.value<Timing | undefined>(),
    }
  }
}

function readOperation(r: Reader): Operation {
  const code = r.value<number>()
  const tenant = r.value<string>()
  switch (code) {
    case GET_NODE: return { op: 'getNode', tenant, node: r.node() }
    case PUT_NODE: return { op: 'putNode', tenant, node: r.node(), props: r.value<Record<string, unknown>>(), ctx: r.context() }
    case GET_RELATION: return { op: 'getRelation', tenant, relation: r.relation() }
    case PUT_RELATION: return { op: 'putRelation', tenant, relation: r.relation(), props: r.value<Record<string, unknown>>(), ctx: r.context() }
    case INCREMENT_COUNTER: return { op: 'incrementCounter', tenant, relation: r.relation(), name: r.value<string>(), ctx: r.context() }
    default: throw new Error(`codec: unknown call code ${code}`)
  }
}

export function encodeRequests(batch: RequestBatch): unknown {
  const out: Wire = []
  for (const req of batch) {
    // A traced call crosses as an object, with its traceparent: the flat runs stay as they are with traces off.
    if (req.kind === 'call' && req.trace === undefined) {
      const start = out.length
      out.push(req.id, req.shard)
      if (pushOperation(out, req.operation)) continue
      out.length = start
    }
    out.push(req)
  }
  return out
}

export function decodeRequests(wire: unknown): RequestBatch {
  const r = new Reader(wire as Wire)
  const batch: RequestBatch = []
  while (r.more) {
    if (r.flat) batch.push({ kind: 'call', id: r.value<number>(), shard: r.value<number>(), operation: readOperation(r) })
    else batch.push(r.value<ActorRequest>())
  }
  return batch
}

export function encodeReplies(batch: ReplyBatch): unknown {
  const out: Wire = []
  for (const reply of batch) {
    if (reply.kind === 'ok') out.push(reply.id, reply.status, reply.body, reply.total, reply.kept)
    else out.push(reply)
  }
  return out
}

export function decodeReplies(wire: unknown): ReplyBatch {
  const r = new Reader(wire as Wire)
  const batch: ReplyBatch = []
  while (r.more) {
    if (r.flat) batch.push({ kind: 'ok', id: r.value<number>(), status: r.value<number>(), body: r.value<string | undefined>(), total: r.value<number | undefined>(), kept: r.value<number | undefined>() })
    else batch.push(r.value<ActorReply>())
  }
  return batch
}
