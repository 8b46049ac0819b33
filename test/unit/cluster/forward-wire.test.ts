import t from 'tap'
import { decodeCall, decodeReply, encodeCall, encodeReply } from '../../../src/cluster/forward-wire'
import type { ActorReply } from '../../../src/contract/messages'

t.test('a forwarded call and its reply cross the wire unchanged, lone surrogates included', async (t) => {
  const id = 'a\uD800b'
  const call = { shard: 3, tenant: 'demo', operation: { op: 'getNode' as const, tenant: 'demo', node: { ns: 'core', type: 'customer', id } }, stream: false }
  const back = decodeCall(encodeCall(call))
  t.same(back, call)
  t.equal((back.operation as { node: { id: string } }).node.id, id, 'the lone surrogate is kept')
  const reply: ActorReply = { kind: 'error', id: 0, type: 'service_unavailable', message: 'm', retryAfter: 5 }
  t.same(decodeReply(encodeReply(reply)), reply)
  // A rendered slice is JSON: the lone surrogate is escaped in it (JSON.stringify), as the actor renders it.
  const body = `[{"id":${JSON.stringify(id)}}`
  const back2 = decodeReply(encodeReply({ kind: 'chunks', id: 7, body, done: false }))
  t.ok(back2.kind === 'chunks' && back2.body === body && !back2.done, 'a slice\'s text arrives as sent')
})
