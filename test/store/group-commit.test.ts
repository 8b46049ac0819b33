// The group commit in-process: a batch runs as one child transaction; when a
// write of it throws, the batch runs again with each write in a child of its
// own, so only the failing write fails and leaves nothing behind.
import t from 'tap'
import type { MessagePort } from 'node:worker_threads'
import type { ActorReply } from '../../src/contract/messages'
import { decodeReplies } from '../../src/contract/codec'
import { GroupCommit } from '../../workers/actor/group-commit'
import { operationTable, runOperation } from '../../workers/actor/operations'
import { Outbox } from '../../workers/actor/outbox'
import { customer, tempShard, writeCtx } from '../helpers/temp-shard'
import type { Key } from '../../workers/store/keys'
import type { EventHead } from '../../workers/store/schema'

/** The actor's error lines, expected here, kept off the test's output. */
function quietErrors(t: { teardown(fn: () => void): void }): void {
  const errors = console.error
  console.error = () => undefined
  t.teardown(() => { console.error = errors })
}

function capture(): { port: MessagePort; replies: ActorReply[] } {
  const replies: ActorReply[] = []
  // The outbox posts the codec's wire form (flat runs for plain replies): decoded as the front thread does.
  const port = { postMessage: (wire: unknown) => { replies.push(...decodeReplies(wire)) } } as unknown as MessagePort
  return { port, replies }
}

t.test('one throwing write of a batch fails alone; the others commit', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const operations = operationTable(s.webhookKey)
  const { port, replies } = capture()
  const outbox = new Outbox(port)
  quietErrors(t)
  const commits = new GroupCommit(outbox, {
    context: () => s.context(),
    run: (sc, op) => {
      if (op.op === 'putNode' && op.node.id === 'bad') {
        runOperation(operations, sc, op)
        throw new RangeError('Invalid time value')
      }
      return runOperation(operations, sc, op)
    },
    eventsAppended: () => undefined,
    schedulesChanged: () => undefined,
  })
  const put = (id: string) => ({ op: 'putNode' as const, tenant: 'demo', node: customer(id), props: { name: id }, ctx: writeCtx(ref) })
  commits.commit(s.store, [{ id: 1, op: put('a') }, { id: 2, op: put('bad') }, { id: 3, op: put('b') }], s.clock.time)
  await commits.drain()
  outbox.flush()
  const byId = new Map(replies.map((r) => [r.id, r]))
  t.match(byId.get(1), { kind: 'ok', status: 204 })
  t.match(byId.get(2), { kind: 'error', type: 'internal_error' })
  t.match(byId.get(3), { kind: 'ok', status: 204 })
  t.ok(s.store.nodes.get(['demo', 'core', 'customer', 'a']), 'a stored')
  t.ok(s.store.nodes.get(['demo', 'core', 'customer', 'b']), 'b stored')
  t.equal(s.store.nodes.get(['demo', 'core', 'customer', 'bad']), undefined, 'the failing write left no node')
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), 2, 'nor a count')
})

t.test("a batch writes each tenant's event head and each type's count once, and they match its events and nodes", async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const operations = operationTable(s.webhookKey)
  const { port, replies } = capture()
  const outbox = new Outbox(port)
  const commits = new GroupCommit(outbox, {
    context: () => s.context(),
    run: (sc, op) => runOperation(operations, sc, op),
    eventsAppended: () => undefined,
    schedulesChanged: () => undefined,
  })
  const writes = { heads: 0, counts: 0 }
  const heads = s.store.eventHeads
  const counts = s.store.counts
  const headPut = heads.putSync.bind(heads)
  const countPut = counts.putSync.bind(counts)
  heads.putSync = ((key: Key, value: EventHead) => { writes.heads++; return headPut(key, value) }) as typeof heads.putSync
  counts.putSync = ((key: Key, value: number) => { writes.counts++; return countPut(key, value) }) as typeof counts.putSync
  const headBefore = heads.get(['demo'])?.last ?? 0
  const put = (id: string) => ({ op: 'putNode' as const, tenant: 'demo', node: customer(id), props: { name: id }, ctx: writeCtx(ref) })
  commits.commit(s.store, ['n1', 'n2', 'n3', 'n4', 'n5'].map((id, n) => ({ id: n + 1, op: put(id) })), s.clock.time)
  await commits.drain()
  outbox.flush()
  t.equal(replies.filter((r) => r.kind === 'ok').length, 5)
  t.equal(writes.heads, 1, 'one head write for five events')
  t.equal(writes.counts, 1, 'one count write for five new nodes')
  t.equal(counts.get(['demo', 'core', 'customer']), 5)
  t.equal(heads.get(['demo'])?.last, headBefore + 5)
  for (let seq = headBefore + 1; seq <= headBefore + 5; seq++) t.ok(s.store.events.get(['demo', seq]), `event ${seq} stored`)
})

t.test('a shred log that cannot be written fails only the revocations of a batch; the other writes answer what they did', async (t) => {
  const s = tempShard(t)
  const kept = await s.consent('demo')
  const revoked = await s.consent('demo')
  const operations = operationTable(s.webhookKey)
  const { port, replies } = capture()
  const outbox = new Outbox(port)
  quietErrors(t)
  let appended = 0
  const commits = new GroupCommit(outbox, {
    context: () => s.context(),
    run: (sc, op) => runOperation(operations, sc, op),
    eventsAppended: () => { appended++ },
    schedulesChanged: () => undefined,
    destroyKeys: () => { throw Object.assign(new Error('No space left on device'), { code: 'ENOSPC' }) },
  })
  commits.commit(s.store, [
    { id: 1, op: { op: 'putNode', tenant: 'demo', node: customer('a'), props: { name: 'a' }, ctx: writeCtx(kept) } },
    { id: 2, op: { op: 'revokeConsent', tenant: 'demo', ref: revoked, caller: { kind: 'tenant' } } },
  ], s.clock.time)
  await commits.drain()
  outbox.flush()
  const byId = new Map(replies.map((r) => [r.id, r]))
  t.match(byId.get(1), { kind: 'ok', status: 204 }, 'the node write is durable and says so')
  t.match(byId.get(2), { kind: 'error', type: 'insufficient_storage' }, 'the revocation answers the failure')
  t.ok(s.store.nodes.get(['demo', 'core', 'customer', 'a']), 'the node is stored')
  t.equal(appended, 1, 'its events are announced')
})
