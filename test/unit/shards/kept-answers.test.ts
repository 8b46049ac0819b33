// The front thread's kept single answers (src/shards/kept-answers.ts): kept
// and served only while the shard's write counter is the actor's stamp,
// dropped per shard after a consent change, bounded in count and size, and
// kept only when asked for a second time.
import t from 'tap'
import { ASKED_ONCE_LIMIT, KEPT_ANSWERS_LIMIT, KEPT_ANSWER_LIMIT, KEPT_CHARS_LIMIT, KeptAnswers } from '../../../src/shards/kept-answers'
import type { Operation } from '../../../src/contract/messages'

const node = (id: string, tenant = 'demo'): Operation => ({ op: 'getNode', tenant, node: { ns: 'core', type: 'customer', id } })

function setup(): { counters: Int32Array; kept: KeptAnswers; key: (op: Operation) => string } {
  const counters = new Int32Array(new SharedArrayBuffer(16))
  return { counters, kept: new KeptAnswers(counters), key: (op) => KeptAnswers.keyOf(op)! }
}

t.test('served while the counter is the stamp; a commit makes it a miss, and it is dropped', async (t) => {
  const { counters, kept, key } = setup()
  Atomics.store(counters, 1, 7)
  kept.keep(1, key(node('a')), '{"id":"a"}', 7)
  t.equal(kept.find(1, key(node('a'))), '{"id":"a"}')
  Atomics.add(counters, 1, 1)
  t.equal(kept.find(1, key(node('a'))), undefined, 'the counter moved: not served')
  t.equal(kept.size, 0, 'and dropped')
})

t.test('an answer whose stamp is already old when it arrives is not kept', async (t) => {
  const { counters, kept, key } = setup()
  Atomics.store(counters, 0, 3)
  kept.keep(0, key(node('a')), '{"id":"a"}', 2)
  t.equal(kept.find(0, key(node('a'))), undefined)
  t.equal(kept.size, 0)
})

t.test('a consent change drops the shard\'s answers, not the others\'', async (t) => {
  const { kept, key } = setup()
  kept.keep(0, key(node('a', 't0')), 'A', 0)
  kept.keep(1, key(node('b', 't1')), 'B', 0)
  kept.forgetShard(0)
  t.equal(kept.find(0, key(node('a', 't0'))), undefined)
  t.equal(kept.size, 1, 'the dropped answer is gone once looked up')
  t.equal(kept.find(1, key(node('b', 't1'))), 'B')
  kept.keep(0, key(node('a', 't0')), 'A2', 0)
  t.equal(kept.find(0, key(node('a', 't0'))), 'A2', 'an answer kept after the drop is served')
})

t.test('a neighbourhood is kept as its bytes, one per format', async (t) => {
  const { kept } = setup()
  const json = KeptAnswers.streamKeyOf({ op: 'neighbours', tenant: 'demo', node: { ns: 'core', type: 'customer', id: 'a' }, format: 'json' })!
  const ndjson = KeptAnswers.streamKeyOf({ op: 'neighbours', tenant: 'demo', node: { ns: 'core', type: 'customer', id: 'a' }, format: 'ndjson' })!
  t.not(json, ndjson)
  t.equal(KeptAnswers.streamKeyOf({ op: 'exportTenant', tenant: 'demo', format: 'ndjson' }), undefined, 'no other stream')
  kept.keep(0, json, Buffer.from('[{"id":"a"}]'), 0)
  t.same(kept.find(0, json), Buffer.from('[{"id":"a"}]'))
  t.equal(kept.find(0, ndjson), undefined)
})

t.test('keys: one per element, none for other operations', async (t) => {
  const relation: Operation = { op: 'getRelation', tenant: 'demo', relation: { from: { ns: 'core', type: 'customer', id: 'a' }, to: { ns: 'core', type: 'product', id: 'b' }, rel: { ns: 'core', type: 'viewed', id: 'r' } } }
  t.not(KeptAnswers.keyOf(node('a|b')), KeptAnswers.keyOf(node('a', 'demo|core')), 'separators in ids do not collide')
  const parts = (tenant: string, ns: string, type: string, id: string): Operation => ({ op: 'getNode', tenant, node: { ns, type, id } })
  const lists = [['ab', 'c', 't', 'i'], ['a', 'bc', 't', 'i'], ['a', 'b', 'ct', 'i'], ['a', 'b', 'c', 'ti'], ['2,1', '1:', 'x', 'y'], ['2', ',1', '1:x', 'y'], ['', '', '', '']]
  const keys = new Set(lists.map(([a, b, c, d]) => KeptAnswers.keyOf(parts(a!, b!, c!, d!))))
  t.equal(keys.size, lists.length, 'the same characters split otherwise, commas and colons in the parts: all distinct keys')
  const neighbours = KeptAnswers.streamKeyOf({ op: 'neighbours', tenant: 'demo', node: { ns: 'core', type: 'customer', id: 'a' }, format: 'json' })
  t.not(neighbours, KeptAnswers.keyOf(node('a')), 'a node and its neighbourhood: two keys')
  t.not(KeptAnswers.keyOf(relation), undefined)
  t.equal(KeptAnswers.keyOf({ op: 'countNodes', tenant: 'demo', ns: 'core', type: 'customer' }), undefined)
})

t.test('past the count or the characters allowed, the oldest tenth goes', async (t) => {
  const { kept, key } = setup()
  for (let i = 0; i < KEPT_ANSWERS_LIMIT; i++) kept.keep(0, key(node(`n${i}`)), '{}', 0)
  t.equal(kept.size, KEPT_ANSWERS_LIMIT)
  kept.keep(0, key(node('one-more')), '{}', 0)
  t.equal(kept.size, Math.floor(KEPT_ANSWERS_LIMIT * 0.9) + 1, 'the count: a tenth dropped, the new one kept')
  t.equal(kept.find(0, key(node('n0'))), undefined, 'the oldest went')
  t.equal(kept.find(0, key(node(`n${KEPT_ANSWERS_LIMIT - 1}`))), '{}', 'the newest stayed')
  kept.forgetAll()
  const big = 'x'.repeat(KEPT_ANSWER_LIMIT)
  const fit = KEPT_CHARS_LIMIT / KEPT_ANSWER_LIMIT
  for (let i = 0; i < fit; i++) kept.keep(0, key(node(`big${i}`)), big, 0)
  kept.keep(0, key(node(`big${fit - 1}`)), big, 0)
  t.equal(kept.size, fit, 'replacing an answer counts its characters once')
  t.equal(kept.find(0, key(node('big0'))), big, 'all fit')
  kept.keep(0, key(node('big-more')), big, 0)
  t.equal(kept.find(0, key(node('big0'))), undefined, 'the characters: the oldest went')
  t.equal(kept.find(0, key(node('big-more'))), big)
  const before = kept.size
  kept.keep(0, key(node('huge')), 'x'.repeat(KEPT_ANSWER_LIMIT + 1), 0)
  t.equal(kept.find(0, key(node('huge'))), undefined, 'an answer longer than one may be is not kept')
  t.equal(kept.size, before, 'and drops nothing')
})

t.test('an answer is wanted only when asked for again', async (t) => {
  const { counters, kept, key } = setup()
  t.notOk(kept.wantedAgain(key(node('a'))), 'asked once: not kept')
  t.notOk(kept.wantedAgain(key(node('b'))))
  t.ok(kept.wantedAgain(key(node('a'))), 'asked again: kept')
  kept.keep(0, key(node('a')), 'A', 0)
  t.equal(kept.find(0, key(node('a'))), 'A')
  Atomics.add(counters, 0, 1)
  t.equal(kept.find(0, key(node('a'))), undefined, 'the counter moved')
  t.ok(kept.wantedAgain(key(node('a'))), 'an answer that was kept and went stale is wanted at its next miss')
  for (let n = 0; n < ASKED_ONCE_LIMIT; n++) kept.wantedAgain(`k${n}`)
  t.notOk(kept.wantedAgain(key(node('b'))), 'past the limit, the keys asked for once are forgotten')
  kept.forgetAll()
  t.notOk(kept.wantedAgain(key(node('b'))), 'forgetAll forgets them too')
})
