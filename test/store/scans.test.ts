// The list and neighbours scans on a real shard: what each slice holds,
// where a slice stops (items, bytes, between neighbours), how the next step
// resumes after the last key, and how much one scan may add to the
// decrypted-element cache.
import t from 'tap'
import { ListScan, NEIGHBOURS_SLICE_BYTES, NeighboursScan, SLICE_BYTES, SLICE_ITEMS, SLICE_KEYS, type Scan, type Slice } from '../../workers/store/scans'
import type { ShardContext } from '../../workers/store/context'
import { deleteNode, putNode } from '../../workers/store/nodes'
import { putRelation } from '../../workers/store/relations'
import { grantConsent, revokeConsent, setRevokedProperties } from '../../workers/store/consents'
import { LOCKED_PLACEHOLDER } from '../../workers/store/records'
import type { Criterion } from '../../src/contract/messages'
import { customer, knows, product, tempShard, viewed, writeCtx, PUBLIC_URL, type TempShard } from '../helpers/temp-shard'

const TENANT = { kind: 'tenant' } as const
const pad = (n: number): string => String(n).padStart(4, '0')
const list = (limit?: number, owner?: string, criterion?: Criterion): ListScan => new ListScan('demo', 'core', 'customer', limit, owner, criterion)

/** Every slice of the scan until done. */
function drain(s: TempShard, scan: Scan): Slice[] {
  const slices: Slice[] = []
  for (;;) {
    const slice = scan.step(s.context())
    slices.push(slice)
    if (slice.done) return slices
    if (slices.length > 10_000) throw new Error('the scan does not end')
  }
}
const parsed = (slices: Slice[]): Record<string, unknown>[] => slices.flatMap((sl) => sl.chunks.map((c) => JSON.parse(c) as Record<string, unknown>))

async function customers(s: TempShard, ref: string, n: number, props: (i: number) => Record<string, unknown> = () => ({})): Promise<void> {
  await s.write((sc: ShardContext) => {
    for (let i = 0; i < n; i++) putNode(sc, 'demo', customer(`c${pad(i)}`), props(i), writeCtx(ref))
  })
}

t.test('a list scan returns the type in id order, in slices of at most SLICE_ITEMS, each node once', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await customers(s, ref, SLICE_ITEMS + 44, (i) => ({ n: i }))
  await s.write((sc) => putNode(sc, 'demo', product('p1'), {}, writeCtx(ref)))
  const slices = drain(s, list())
  t.same(slices.map((sl) => [sl.chunks.length, sl.done]), [[SLICE_ITEMS, false], [44, true]])
  const nodes = parsed(slices)
  t.same(nodes.map((n) => n.n), [...Array(SLICE_ITEMS + 44).keys()], 'in order, none twice, none missing')
  t.match(nodes[0], { id: 'c0000', 'consent-reference': ref, tenant: 'demo', schema: `${PUBLIC_URL}/graph/v1/demo/metamodel/nodes/core/customer`, n: 0 })
  t.same(drain(s, new ListScan('demo', 'core', 'nothing', undefined, undefined, undefined)), [{ chunks: [], done: true }])
  t.same(drain(s, new ListScan('other', 'core', 'customer', undefined, undefined, undefined)), [{ chunks: [], done: true }], "another tenant's list is empty")
})

t.test('a list scan stops a slice once it holds SLICE_BYTES', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const big = 'x'.repeat(10_000)
  await customers(s, ref, 20, () => ({ big }))
  const slices = drain(s, list())
  const per = Math.ceil(SLICE_BYTES / (big.length + 200))
  t.ok(slices.length >= 3, `${slices.length} slices`)
  for (const sl of slices.slice(0, -1)) {
    t.ok(sl.chunks.length <= per + 1, `a slice of ${sl.chunks.length} items`)
    t.ok(sl.chunks.join('').length < SLICE_BYTES + big.length + 1000, 'at most one item past the budget')
  }
  t.equal(parsed(slices).length, 20)
})

t.test('the limit ends a list scan, across slices too', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await customers(s, ref, SLICE_ITEMS + 20)
  t.same(drain(s, list(3)).map((sl) => sl.chunks.length), [3])
  t.equal(parsed(drain(s, list(3))).at(-1)!.id, 'c0002')
  t.same(drain(s, list(SLICE_ITEMS + 5)).map((sl) => [sl.chunks.length, sl.done]), [[SLICE_ITEMS, false], [5, true]])
  t.same(drain(s, list(0)), [{ chunks: [], done: true }])
})

t.test('a list scan resumes after its last key: later writes ahead of it are seen, behind it are not', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await customers(s, ref, SLICE_ITEMS + 10)
  const scan = list()
  const first = scan.step(s.context())
  t.equal(first.done, false)
  await s.write((sc) => {
    putNode(sc, 'demo', customer('a-before'), {}, writeCtx(ref))
    putNode(sc, 'demo', customer('z-after'), {}, writeCtx(ref))
    deleteNode(sc, 'demo', customer(`c${pad(SLICE_ITEMS + 1)}`), undefined)
  })
  const rest = parsed(drain(s, scan)).map((n) => n.id)
  t.equal(rest.length, 10, '9 left of the first set, and the new one after the cursor')
  t.notOk(rest.includes('a-before'))
  t.ok(rest.includes('z-after'))
  t.notOk(rest.includes(`c${pad(SLICE_ITEMS + 1)}`), 'a node deleted meanwhile is not listed')
})

t.test('the owner filter lists that consent\'s nodes and tenant-owned ones', async (t) => {
  const s = tempShard(t)
  const a = await s.consent('demo', 'alice')
  const b = await s.consent('demo', 'bob')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), {}, writeCtx(a))
    putNode(sc, 'demo', customer('c2'), {}, writeCtx(b))
    putNode(sc, 'demo', customer('c3'), {}, writeCtx(a))
  })
  t.same(parsed(drain(s, list(undefined, a))).map((n) => n.id), ['c1', 'c3'])
  t.same(parsed(drain(s, list(undefined, b))).map((n) => n.id), ['c2'])
  await s.write((sc) => {
    putNode(sc, 'demo', product('p1'), {}, writeCtx(a))
    putNode(sc, 'demo', product('p2'), {}, writeCtx(b))
  })
  t.same(parsed(drain(s, new ListScan('demo', 'core', 'product', undefined, a, undefined))).map((n) => n.id), ['p1', 'p2'])
})

t.test('a criterion lists the nodes whose current value matches, through the blind index', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await customers(s, ref, 10, (i) => ({ name: i % 3 === 0 ? 'Ada' : 'Bob', age: i }))
  t.same(parsed(drain(s, list(undefined, undefined, { property: 'name', value: 'Ada' }))).map((n) => n.id), ['c0000', 'c0003', 'c0006', 'c0009'])
  t.same(parsed(drain(s, list(undefined, undefined, { property: 'age', value: 4 }))).map((n) => n.id), ['c0004'])
  t.same(parsed(drain(s, list(undefined, undefined, { property: 'age', value: '4' }))), [], 'the value is typed')
  await s.write((sc) => putNode(sc, 'demo', customer('c0003'), { name: 'Eve' }, writeCtx(ref)))
  t.same(parsed(drain(s, list(undefined, undefined, { property: 'name', value: 'Ada' }))).map((n) => n.id), ['c0000', 'c0006', 'c0009'], 'a changed value leaves the old term')
  t.same(parsed(drain(s, list(1, undefined, { property: 'name', value: 'Ada' }))).map((n) => n.id), ['c0000'])
})

t.test('a node that cannot be opened is listed as the locked placeholder', async (t) => {
  const s = tempShard(t)
  const a = await s.consent('demo', 'alice')
  const b = await s.consent('demo', 'bob')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'A' }, writeCtx(a))
    putNode(sc, 'demo', customer('c2'), { name: 'B' }, writeCtx(b))
  })
  await s.write((sc) => revokeConsent(sc.store, 'demo', a, TENANT, sc.shred))
  const [c1, c2] = drain(s, list())[0]!.chunks
  t.equal(c1, LOCKED_PLACEHOLDER, 'revoked: locked')
  t.match(JSON.parse(c2!), { id: 'c2', name: 'B' })
  await s.write((sc) => grantConsent(sc.store, 'demo', a, TENANT))
  t.equal(drain(s, list())[0]!.chunks[0], LOCKED_PLACEHOLDER, 'granted again: still locked')
})

t.test('one scan adds at most 64 elements to the decrypted cache', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await customers(s, ref, 150, () => ({ name: 'x' }))
  s.store.cache.plain.clear()
  t.equal(parsed(drain(s, list())).length, 150)
  t.equal(s.store.cache.plain.size, 64)
  s.store.cache.plain.clear()
  await s.write((sc) => {
    for (let i = 0; i < 150; i++) putRelation(sc, 'demo', knows(customer('hub'), customer(`c${pad(i)}`)), { w: i }, writeCtx(ref))
  })
  s.store.cache.plain.clear()
  t.equal(parsed(drain(s, new NeighboursScan('demo', customer('hub')))).length, 151)
  t.equal(s.store.cache.plain.size, 64, 'nodes and relations count alike')
})

t.test('a list step reads at most SLICE_KEYS keys even when the owner filter skips them, and resumes after them', async (t) => {
  const s = tempShard(t)
  const a = await s.consent('demo', 'alice')
  const b = await s.consent('demo', 'bob')
  await customers(s, b, 4 * SLICE_ITEMS + 10)
  await s.write((sc) => putNode(sc, 'demo', customer('z'), {}, writeCtx(a)))
  t.equal(SLICE_KEYS, 4 * SLICE_ITEMS)
  const slices = drain(s, list(undefined, a))
  t.same(slices.map((sl) => [sl.chunks.length, sl.done]), [[0, false], [1, true]], 'the skipped keys end the first step')
  t.same(parsed(slices).map((n) => n.id), ['z'])
  t.equal(parsed(drain(s, list())).length, 4 * SLICE_ITEMS + 11, 'without the filter every node, in slices of SLICE_ITEMS')
})

t.test('a criterion list step reads at most SLICE_KEYS index keys even when their hits no longer match', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await customers(s, ref, SLICE_KEYS + 5, (i) => ({ name: `n${i}` }))
  // Index terms for "x" whose nodes hold other values: what data that can no
  // longer be decrypted leaves behind (search-index.ts).
  await s.write((sc) => {
    for (let i = 0; i < SLICE_KEYS + 5; i++) {
      sc.store.index.putSync(['demo', 'core', 'customer', 'name', sc.blind.term('demo', 'name', 'x'), `c${pad(i)}`], 1)
    }
  })
  const slices = drain(s, list(undefined, undefined, { property: 'name', value: 'x' }))
  t.same(slices.map((sl) => [sl.chunks.length, sl.done]), [[0, false], [0, true]])
})

t.test('a neighbours scan: the source first, then each neighbour once with every relation joining it', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const c1 = customer('c1')
  await s.write((sc) => {
    putNode(sc, 'demo', c1, { name: 'Ada' }, writeCtx(ref))
    putRelation(sc, 'demo', viewed('c1', 'p1', 'a'), { views: 1 }, writeCtx(ref))
    putRelation(sc, 'demo', viewed('c1', 'p1', 'b'), { views: 2 }, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('c2'), c1), {}, writeCtx(ref))
    putRelation(sc, 'demo', knows(c1, customer('c2'), 'back'), {}, writeCtx(ref))
    putRelation(sc, 'demo', knows(c1, c1, 'self'), {}, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('c3'), customer('c4')), {}, writeCtx(ref))
  })
  const scan = new NeighboursScan('demo', c1)
  t.same(new NeighboursScan('demo', customer('nobody')).step(s.context()), { chunks: [], done: true, notFound: 'node core/customer/nobody not found' }, 'no source: the 404, nothing sent')
  const slices = drain(s, scan)
  t.notOk('notFound' in slices[0]!, 'a source that exists is no 404')
  t.equal(slices.length, 1)
  const [source, ...neighbours] = parsed(slices)
  t.match(source, { id: 'c1', locked: false, properties: { name: 'Ada' }, neighbours_url: `${PUBLIC_URL}/graph/v1/demo/neighbours/core/customer/c1` })
  t.notOk('relations' in source!, 'the source has no relations list')
  t.same(neighbours.map((n) => n.id), ['c1', 'c2', 'p1'], 'each neighbour once, in key order; c1 is its own neighbour')
  const rels = (n: Record<string, unknown>): [unknown, unknown, unknown][] =>
    (n.relations as Record<string, unknown>[]).map((r) => [r.fid, r.tid, r.id])
  t.same(rels(neighbours[0]!), [['c1', 'c1', 'self']], 'a self-relation once')
  t.same(rels(neighbours[1]!), [['c1', 'c2', 'back'], ['c2', 'c1', 'r1']], 'both directions')
  t.same(rels(neighbours[2]!), [['c1', 'p1', 'a'], ['c1', 'p1', 'b']])
  t.match((neighbours[2]!.relations as unknown[])[1], { locked: false, consentReference: ref, properties: { views: 2 } })
})

t.test('a neighbours scan slices between neighbours, never inside one, and lists each neighbour once', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const hub = customer('hub')
  const N = 300
  await s.write((sc) => {
    for (let i = 0; i < N; i++) {
      // Each neighbour is joined by three relations, one of them in the other direction.
      putRelation(sc, 'demo', knows(hub, customer(`n${pad(i)}`), 'a'), {}, writeCtx(ref))
      putRelation(sc, 'demo', knows(hub, customer(`n${pad(i)}`), 'b'), {}, writeCtx(ref))
      putRelation(sc, 'demo', knows(customer(`n${pad(i)}`), hub, 'c'), {}, writeCtx(ref))
    }
  })
  const slices = drain(s, new NeighboursScan('demo', hub))
  t.ok(slices.length >= 3, `${slices.length} slices`)
  for (const sl of slices.slice(0, -1)) {
    t.ok(sl.chunks.length <= SLICE_ITEMS + 1)
    const bytes = sl.chunks.join('').length
    t.ok(bytes >= NEIGHBOURS_SLICE_BYTES || sl.chunks.length >= SLICE_ITEMS, 'a slice ends only at a budget')
  }
  const chunks = parsed(slices)
  t.equal(chunks[0]!.id, 'hub')
  const ids = chunks.slice(1).map((n) => n.id)
  t.same(ids, [...Array(N).keys()].map((i) => `n${pad(i)}`), 'each neighbour once, in order')
  t.ok(chunks.slice(1).every((n) => (n.relations as unknown[]).length === 3), "a neighbour's relations are never split")
})

t.test('a neighbours scan stops a slice once it holds NEIGHBOURS_SLICE_BYTES, and resumes after a write', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const hub = customer('hub')
  // Three neighbours stay under the budget, the fourth's relations pass it.
  const big = 'y'.repeat(Math.floor(NEIGHBOURS_SLICE_BYTES / 6.5))
  await s.write((sc) => {
    for (let i = 0; i < 20; i++) putRelation(sc, 'demo', knows(hub, customer(`n${pad(i)}`)), { big }, writeCtx(ref))
    // One neighbour whose relations alone pass the budget.
    for (let r = 0; r < 10; r++) putRelation(sc, 'demo', knows(hub, customer('n0003'), `x${r}`), { big }, writeCtx(ref))
  })
  const scan = new NeighboursScan('demo', hub)
  const first = scan.step(s.context())
  t.equal(first.done, false)
  t.same(parsed([first]).map((n) => n.id), ['hub', 'n0000', 'n0001', 'n0002', 'n0003'], 'the slice ends after the neighbour that passed the budget')
  t.equal((parsed([first]).at(-1)!.relations as unknown[]).length, 11, 'whole')
  await s.write((sc) => {
    putRelation(sc, 'demo', knows(hub, customer('a-before')), {}, writeCtx(ref))
    putRelation(sc, 'demo', knows(hub, customer('z-after')), {}, writeCtx(ref))
  })
  const rest = parsed(drain(s, scan)).map((n) => n.id)
  t.equal(first.chunks.length - 1 + rest.length, 21)
  t.ok(rest.includes('z-after'))
  t.notOk(rest.includes('a-before'))
})

t.test('a neighbours scan shows what cannot be opened as locked, keeping identity and owner', async (t) => {
  const s = tempShard(t)
  const a = await s.consent('demo', 'alice')
  const b = await s.consent('demo', 'bob')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'A' }, writeCtx(a))
    putRelation(sc, 'demo', knows(customer('c1'), customer('c2')), { w: 1 }, writeCtx(b))
    putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 1 }, writeCtx(a))
  })
  await s.write((sc) => revokeConsent(sc.store, 'demo', a, TENANT, sc.shred))
  const [source, c2, p1] = parsed(drain(s, new NeighboursScan('demo', customer('c1'))))
  t.match(source, { id: 'c1', locked: true, properties: {}, consentReference: a })
  t.match(c2, { id: 'c2', locked: false, relations: [{ locked: false, properties: { w: 1 } }] })
  t.match(p1, { id: 'p1', locked: false, consentReference: 'TENANT', relations: [{ locked: true, properties: {}, consentReference: a }] })
})

t.test('a criterion finds nothing through a property whose consent is revoked', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada', age: 36 }, writeCtx(ref)))
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, ['name'], TENANT))
  t.same(parsed(drain(s, list(undefined, undefined, { property: 'name', value: 'Ada' }))), [], 'the hidden value is not searchable')
  t.same(parsed(drain(s, list(undefined, undefined, { property: 'age', value: 36 }))).map((n) => [n.id, n.name]), [['c1', undefined]], 'the node is, by what it shows')
})

t.test('after a revocation, a criterion does not tell which values the shredded data held', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(ref)))
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
  const held = drain(s, list(undefined, undefined, { property: 'name', value: 'Ada' }))[0]!.chunks
  const never = drain(s, list(undefined, undefined, { property: 'name', value: 'Eve' }))[0]!.chunks
  t.same(never, [])
  t.same(held, never, 'a guess of the revoked value answers like any other guess')
})

t.test('index terms and adjacency entries whose element is gone are skipped', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(ref))
    putNode(sc, 'demo', customer('c2'), { name: 'Ada' }, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('hub'), customer('c1')), {}, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('hub'), customer('c2')), {}, writeCtx(ref))
  })
  // Left behind as a crash or an undecryptable value would leave them: the element is gone, the entry is not.
  await s.write((sc) => {
    sc.store.nodes.removeSync(['demo', 'core', 'customer', 'c1'])
    sc.store.relations.removeSync(['demo', 'core', 'customer', 'hub', 'core', 'customer', 'c2', 'core', 'knows', 'r1'])
  })
  t.same(parsed(drain(s, list(undefined, undefined, { property: 'name', value: 'Ada' }))).map((n) => n.id), ['c2'])
  const [, ...neighbours] = parsed(drain(s, new NeighboursScan('demo', customer('hub'))))
  t.same(neighbours.map((n) => [n.id, (n.relations as unknown[]).length]), [['c2', 0]], 'a missing neighbour is left out; a missing relation is not listed')
  const scan = new NeighboursScan('demo', customer('hub'))
  await s.write((sc) => deleteNode(sc, 'demo', customer('hub'), undefined))
  t.same(scan.step(s.context()), { chunks: [], done: true, notFound: 'node core/customer/hub not found' }, 'a source deleted before the first step is the 404: nothing was sent yet')
})

t.test('neighbours chunks leave out properties whose consent is revoked', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'Ada', email: 'a@x' }, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('c1'), customer('c2')), { email: 'r@x', w: 1 }, writeCtx(ref))
  })
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, ['email'], TENANT))
  const [source, c2] = parsed(drain(s, new NeighboursScan('demo', customer('c1'))))
  t.same(source!.properties, { name: 'Ada' })
  t.same((c2!.relations as { properties: unknown }[])[0]!.properties, { w: 1 })
  const [listed1] = parsed(drain(s, list()))
  t.equal(listed1!.name, 'Ada')
  t.notOk('email' in listed1!, 'nor does the list')
})
