import t from 'tap'
import { MessageChannel } from 'node:worker_threads'
import { decodeReplies, decodeRequests, encodeReplies, encodeRequests, type ReplyBatch, type RequestBatch } from '../../../src/contract/codec'
import type { WriteContext } from '../../../src/contract/messages'

const node = { ns: 'core', type: 'customer', id: 'a/b c✓' }
const relation = { from: node, to: { ns: 'core', type: 'product', id: 'p-1' }, rel: { ns: 'core', type: 'viewed', id: 'r 1' } }
const ctx: WriteContext = { consent: 'consent-1', client: 'demo-enricher', trace: undefined, schedule: undefined, decay: { at: 1_700_000_000_000, parameter: 'p' } }

const requests: RequestBatch = [
  { kind: 'call', id: 1, shard: 2, operation: { op: 'getNode', tenant: 'demo', node } },
  { kind: 'call', id: 2, shard: 2, operation: { op: 'putNode', tenant: 'demo', node, props: { name: 'Ann', age: 42, tags: ['a', 'b'], nested: { x: null, y: true } }, ctx } },
  { kind: 'call', id: 3, shard: 0, operation: { op: 'incrementCounter', tenant: 'demo', relation, name: 'views', ctx } },
  { kind: 'call', id: 4, shard: 1, operation: { op: 'listNodes', tenant: 'acme', ns: 'core', type: 'customer', limit: 10, owner: undefined, criterion: { property: 'name', value: 'John Smith' }, format: 'json' } },
  { kind: 'call', id: 5, shard: 1, operation: { op: 'putNodeProperty', tenant: 'acme', node, key: 'score', value: -1.5, ctx } },
  { kind: 'call', id: 8, shard: 3, operation: { op: 'getRelation', tenant: 'demo', relation } },
  { kind: 'call', id: 9, shard: 3, operation: { op: 'putRelation', tenant: 'demo', relation, props: { since: 2020 }, ctx: { ...ctx, trace: 't-1', schedule: { at: 1, parameter: undefined } } } },
  { kind: 'call', id: 10, shard: 0, operation: { op: 'getNode', tenant: 'd\ud800', node: { ns: 'core', type: 'customer', id: 'lone \udc00 surrogate' } } },
  { kind: 'openReaders', id: 11, shards: [1, 2] },
  { kind: 'more', id: 4 },
  { kind: 'cancel', id: 4 },
  { kind: 'shutdown', id: 6 },
]

const replies: ReplyBatch = [
  { kind: 'ok', id: 1, status: 200, body: '{"id":"a/b c✓","created":1}', total: undefined, kept: 41 },
  { kind: 'ok', id: 2, status: 204, body: undefined, total: undefined, kept: undefined },
  { kind: 'ok', id: 7, status: 200, body: undefined, total: 12, kept: undefined },
  { kind: 'error', id: 3, type: 'forbidden', message: 'consent reference "x" may not write' },
  { kind: 'chunks', id: 4, body: '[{"id":"1"},{"id":"2"}', done: false },
  { kind: 'chunks', id: 4, body: ']', done: true },
  { kind: 'closed', id: 4 },
  { kind: 'ok', id: 9, status: 201, body: '{"id":"lone \udc00"}', total: undefined, kept: undefined },
  { kind: 'events', id: 0, tenant: 'demo', last: 12 },
]

function viaChannel(wire: unknown): Promise<unknown> {
  const { port1, port2 } = new MessageChannel()
  return new Promise<unknown>((resolve) => {
    port2.once('message', (m: unknown) => {
      port1.close()
      port2.close()
      resolve(m)
    })
    port1.postMessage(wire)
  })
}

t.test('request batches round-trip through the codec', async (t) => {
  t.same(decodeRequests(encodeRequests(requests)), requests)
  t.same(decodeRequests(encodeRequests([])), [])
})

t.test('reply batches round-trip through the codec', async (t) => {
  t.same(decodeReplies(encodeReplies(replies)), replies)
})

t.test('request batches survive structured clone over a MessageChannel', async (t) => {
  const received = decodeRequests(await viaChannel(encodeRequests(requests)))
  t.not(received, requests, 'a copy arrived, not the same object')
  t.strictSame(received, requests)
  const listNodes = received[3]
  t.ok(listNodes?.kind === 'call' && listNodes.operation.op === 'listNodes' && 'owner' in listNodes.operation,
    'an undefined field is kept as a present key')
})

t.test('reply batches survive structured clone over a MessageChannel', async (t) => {
  const received = decodeReplies(await viaChannel(encodeReplies(replies)))
  t.not(received, replies)
  t.strictSame(received, replies)
  const first = received[0]
  t.equal(first?.kind === 'ok' ? first.body : null, '{"id":"a/b c✓","created":1}', 'Unicode in bodies survives')
})

t.test('messages rebuilt from the flat wire form have the keys of the originals, in the same order', async (t) => {
  const viaWire = async <T>(batch: T[], encode: (b: T[]) => unknown, decode: (w: unknown) => T[]): Promise<string[]> =>
    decode(await viaChannel(encode(batch))).map((m) => JSON.stringify(m, (_k, v: unknown) => (v === undefined ? '<undefined>' : v)))
  const keyed = (batch: unknown[]): string[] => batch.map((m) => JSON.stringify(m, (_k, v: unknown) => (v === undefined ? '<undefined>' : v)))
  t.strictSame(await viaWire(requests, encodeRequests, decodeRequests), keyed(requests))
  t.strictSame(await viaWire(replies, encodeReplies, decodeReplies), keyed(replies))
})

t.test('the hot calls and plain replies cross flat (no object per message), the rest as objects', async (t) => {
  const wire = encodeRequests([requests[0]!, requests[3]!]) as unknown[]
  t.equal(wire.filter((v) => typeof v === 'object' && v !== null && !Array.isArray(v)).length, 1, 'getNode: no object; listNodes: one (the request itself)')
  t.same(wire.slice(0, 7), [1, 2, 0, 'demo', 'core', 'customer', 'a/b c✓'])
  const replyWire = encodeReplies([replies[0]!]) as unknown[]
  t.same(replyWire, [1, 200, '{"id":"a/b c✓","created":1}', undefined, 41])
})

t.test('a traced call (traces on) crosses as an object with its traceparent; the same call untraced crosses flat', async (t) => {
  const call = requests[0]!
  const traced = { ...call, trace: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } as RequestBatch[number]
  const wire = encodeRequests([traced, call]) as unknown[]
  t.same(wire[0], traced, 'the traced call is the first value, whole')
  t.same(wire.slice(1, 4), [1, 2, 0], 'the untraced one flat after it')
  t.same(decodeRequests(wire), [traced, call])
})
