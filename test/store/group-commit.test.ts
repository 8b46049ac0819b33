// The group commit in-process: a batch runs as one child transaction; when a
// write of it throws, the batch runs again with each write in a child of its
// own, so only the failing write fails and leaves nothing behind.
import t from 'tap'
import type { MessagePort } from 'node:worker_threads'
import type { ActorReply } from '../../src/contract/messages'
import { GroupCommit } from '../../workers/actor/group-commit'
import { operationTable, runOperation } from '../../workers/actor/operations'
import { Outbox } from '../../workers/actor/outbox'
import { customer, tempShard, writeCtx } from '../helpers/temp-shard'

function capture(): { port: MessagePort; replies: ActorReply[] } {
  const replies: ActorReply[] = []
  const port = { postMessage: (batch: ActorReply[]) => { replies.push(...batch) } } as unknown as MessagePort
  return { port, replies }
}

t.test('one throwing write of a batch fails alone; the others commit', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const operations = operationTable(s.webhookKey)
  const { port, replies } = capture()
  const outbox = new Outbox(port)
  const errors = console.error
  console.error = () => undefined
  t.teardown(() => { console.error = errors })
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
