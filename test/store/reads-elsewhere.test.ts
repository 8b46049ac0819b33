// The parts of reads on every core that live in the actor: a shard opened by
// a thread that does not own it (`reader`) reads event heads afresh and drops
// what it cached of a consent on forgetConsent; a stream keeps a window of
// slices in flight instead of a round trip per slice.
import t from 'tap'
import { MessageChannel } from 'node:worker_threads'
import { forgetConsent, revokeConsent } from '../../workers/store/consents'
import { appendEvent, head } from '../../workers/store/events'
import { getNode, putNode } from '../../workers/store/nodes'
import { closeShard, openShard, type ShardStore } from '../../workers/store/shard-store'
import { SLICE_ITEMS } from '../../workers/store/scans'
import { Outbox } from '../../workers/actor/outbox'
import { STREAM_WINDOW, Streams } from '../../workers/actor/streams'
import type { ActorReply } from '../../src/contract/messages'
import type { ShardContext } from '../../workers/store/context'
import { customer, tempShard, writeCtx, type TempShard } from '../helpers/temp-shard'
import { sleep } from '../../bench/wait'

const TENANT = { kind: 'tenant' } as const

function readerOf(s: TempShard, t: { teardown(fn: () => Promise<void>): void }): { store: ShardStore; context(): ShardContext } {
  const store = openShard(s.dir, 0, s.masterKey, 1_000_000, true)
  t.teardown(() => closeShard(store))
  return { store, context: () => ({ ...s.context(), store }) }
}

t.test('a reader reads the event head afresh: another thread appends', async (t) => {
  const s = tempShard(t)
  const reader = readerOf(s, t)
  t.same(head(reader.store, 'demo'), { first: 1, last: 0 })
  await s.write((sc) => appendEvent(sc.store, 'demo', 'CREATE', 'x', {}, undefined, sc.now))
  reader.store.env.resetReadTxn()
  t.same(head(reader.store, 'demo'), { first: 1, last: 1 }, 'the new head, not a cached one')
})

t.test("a reader's cached consent and elements are dropped by forgetConsent, not before", async (t) => {
  const s = tempShard(t)
  const reader = readerOf(s, t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Secret Name' }, writeCtx(ref)))
  reader.store.env.resetReadTxn()
  t.match(getNode(reader.context(), 'demo', customer('c1')), { kind: 'ok', status: 200, body: /Secret Name/ }, 'the reader opens it')
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
  reader.store.env.resetReadTxn()
  t.match(getNode(reader.context(), 'demo', customer('c1')), { kind: 'ok', body: /Secret Name/ }, 'without forgetConsent its caches still open it: the pool must broadcast')
  forgetConsent(reader.store, 'demo', ref)
  t.match(getNode(reader.context(), 'demo', customer('c1')), { kind: 'error', type: 'consent_revoked' }, 'after forgetConsent the committed revocation decides')
  t.equal(reader.store.cache.plain.size, 0, 'no decrypted element of the consent is left')
})

t.test('a stream sends up to STREAM_WINDOW slices without waiting, then one per more', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => {
    for (let i = 0; i < SLICE_ITEMS * (STREAM_WINDOW + 2); i++) putNode(sc, 'demo', customer(`c${String(i).padStart(5, '0')}`), { n: i }, writeCtx(ref))
  })
  const { port1, port2 } = new MessageChannel()
  t.teardown(() => { port1.close(); port2.close() })
  const received: ActorReply[] = []
  port2.on('message', (batch: ActorReply[]) => received.push(...batch))
  const streams = new Streams(new Outbox(port1), () => s.context())
  const settle = (): Promise<void> => sleep(100)
  streams.start(7, s.store, { op: 'listNodes', tenant: 'demo', ns: 'core', type: 'customer', limit: undefined, owner: undefined, criterion: undefined, format: 'ndjson' })
  await settle()
  t.equal(received.length, STREAM_WINDOW, 'the window is sent without a round trip')
  streams.step(7)
  await settle()
  t.equal(received.length, STREAM_WINDOW + 1, 'each more opens it by one slice')
  streams.step(7)
  streams.step(7)
  await settle()
  const text = received.map((r) => (r.kind === 'chunks' ? Buffer.from(r.body).toString() : '')).join('')
  const chunks = text.split('\n').filter((line) => line !== '')
  t.equal(chunks.length, SLICE_ITEMS * (STREAM_WINDOW + 2), 'every node once')
  t.ok(received.at(-1)?.kind === 'chunks' && received.at(-1)?.kind === 'chunks' && (received.at(-1) as { done: boolean }).done, 'the last slice ends the stream')
})
