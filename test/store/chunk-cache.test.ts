// Neighbours chunks kept rendered in the decrypted-element cache
// (workers/store/chunk-cache.ts): a hot element is served from the cache, and
// every change that could make it stale or too revealing makes the next read
// render it afresh: a write (on the owner's thread and on a reader's), a
// revocation, a change of revoked properties, a grant after a revocation, a
// destroyed key. Each test first marks the cached chunks, shows the marks are
// served while nothing changed (so the cache is in use), then changes one
// thing and finds no mark and no stale or revoked plaintext.
import t, { type Test } from 'tap'
import { forgetConsent, grantConsent, revokeConsent, setRevokedProperties } from '../../workers/store/consents'
import { putNode } from '../../workers/store/nodes'
import { putRelation } from '../../workers/store/relations'
import { NeighboursScan, type Slice } from '../../workers/store/scans'
import { closeShard, openShard, type ShardStore } from '../../workers/store/shard-store'
import type { ShardContext } from '../../workers/store/context'
import { customer, product, tempShard, viewed, writeCtx, type TempShard } from '../helpers/temp-shard'

const TENANT = { kind: 'tenant' } as const
const MARK = '"MARK":1'

/** The whole neighbours answer of c1, as text (every chunk of every slice). */
function neighbours(sc: ShardContext): string {
  const scan = new NeighboursScan('demo', customer('c1'))
  const chunks: string[] = []
  for (let slice: Slice = scan.step(sc); ; slice = scan.step(sc)) {
    chunks.push(...slice.chunks)
    if (slice.done) return `[${chunks.join(',')}]`
  }
}

/** Replaces every cached chunk's text with a marked one: served only while the cache entry is used. */
function mark(store: ShardStore): number {
  let n = 0
  for (const entry of store.cache.plain.values()) {
    if (entry.chunk === undefined) continue
    entry.chunk.text = entry.chunk.text.replace(/^\{/, `{${MARK},`)
    n++
  }
  return n
}

/** c1 (customer, Secret Name) viewed p1 (tenant-owned product); all written with consent `ref`. */
async function graph(s: TempShard): Promise<string> {
  const ref = await s.consent('demo')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'Secret Name', email: 'a@b.c' }, writeCtx(ref))
    putNode(sc, 'demo', product('p1'), { title: 'Lamp' }, writeCtx(ref))
    putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 3 }, writeCtx(ref))
  })
  return ref
}

/** Warms the cache, marks it, and checks the marks are what a read now serves. */
function warmAndMark(t: Test, store: ShardStore, sc: () => ShardContext): void {
  const plain = neighbours(sc())
  t.match(plain, /Secret Name/)
  neighbours(sc())
  t.equal(mark(store), 3, 'the three elements have a cached chunk')
  const marked = neighbours(sc())
  t.equal(marked.split(MARK).length - 1, 3, 'while nothing changed, the cached chunks are served')
  t.same(JSON.parse(marked.replaceAll(`${MARK},`, '')), JSON.parse(plain), 'and they are the answer')
}

t.test('the cached chunks are the exact bytes a fresh render gives', async (t) => {
  const s = tempShard(t)
  await graph(s)
  s.store.cache.plain.clear()
  const cold = neighbours(s.context())
  t.equal(neighbours(s.context()), cold, 'second read, from the cache')
  t.equal(neighbours(s.context()), cold, 'third read')
})

t.test('a write renders the element afresh', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  warmAndMark(t, s.store, () => s.context())
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'New Name' }, writeCtx(ref))
    putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 4 }, writeCtx(ref))
  })
  const after = neighbours(s.context())
  t.equal(after.split(MARK).length - 1, 1, 'only the unchanged product is still served from the cache')
  t.match(after, /"name":"New Name"/)
  t.match(after, /"views":4/)
  t.notMatch(after, /Secret Name/)
})

t.test('a revocation locks every element of the consent, cached or not', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  warmAndMark(t, s.store, () => s.context())
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
  const after = neighbours(s.context())
  t.notMatch(after, /Secret Name|a@b\.c|"views":3/, 'no plaintext of the revoked consent')
  const [source, neighbour] = JSON.parse(after.replaceAll(`${MARK},`, '')) as { locked: boolean; properties: object; relations?: { locked: boolean }[] }[]
  t.match(source, { locked: true, properties: {} })
  t.match(neighbour!.relations, [{ locked: true, properties: {} }])
  t.match(neighbour, { locked: false, properties: { title: 'Lamp' } }, 'the tenant-owned product stays open')
})

t.test('revoked properties are left out at once, on the owner thread (no cache drop there)', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  warmAndMark(t, s.store, () => s.context())
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, ['name', 'views'], TENANT))
  const after = neighbours(s.context())
  t.notMatch(after, /Secret Name|"views"/, 'the revoked properties are gone')
  t.match(after, /a@b\.c/, 'the others stay')
  t.equal(after.split(MARK).length - 1, 1, 'only the tenant-owned product is still from the cache')
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, [], TENANT))
  t.match(neighbours(s.context()), /Secret Name/, 'given back: shown again')
})

t.test('granted again after a revocation: the old data stays locked', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  warmAndMark(t, s.store, () => s.context())
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
  await s.write((sc) => grantConsent(sc.store, 'demo', ref, TENANT))
  const after = neighbours(s.context())
  t.notMatch(after, /Secret Name|a@b\.c|"views":3/)
  t.match(JSON.parse(after.replaceAll(`${MARK},`, '')), [{ id: 'c1', locked: true }])
})

t.test('a destroyed data key locks the element even while its consent record is unchanged', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  warmAndMark(t, s.store, () => s.context())
  const slot = s.store.cache.consents.get('demo')!.get(ref)!.slot
  s.store.keys.destroy(slot)
  const after = neighbours(s.context())
  t.notMatch(after, /Secret Name|a@b\.c|"views":3/)
})

t.test('a reading thread: a write by the owner, then a revocation once forgetConsent has run', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  const store = openShard(s.dir, 0, s.masterKey, 1_000_000, true)
  t.teardown(() => closeShard(store))
  const sc = (): ShardContext => ({ ...s.context(), store })
  warmAndMark(t, store, sc)
  await s.write((w) => putNode(w, 'demo', customer('c1'), { name: 'Owner Wrote' }, writeCtx(ref)))
  store.env.resetReadTxn()
  const written = neighbours(sc())
  t.match(written, /Owner Wrote/, "the owner's write is read, not the reader's cached chunk")
  t.notMatch(written, /Secret Name/)
  neighbours(sc())
  await s.write((w) => setRevokedProperties(w.store, 'demo', ref, ['name'], TENANT))
  store.env.resetReadTxn()
  forgetConsent(store, 'demo', ref)
  t.notMatch(neighbours(sc()), /Owner Wrote/, 'revoked property left out after forgetConsent')
  await s.write((w) => revokeConsent(w.store, 'demo', ref, TENANT, w.shred))
  store.env.resetReadTxn()
  forgetConsent(store, 'demo', ref)
  const revoked = neighbours(sc())
  t.notMatch(revoked, /Owner Wrote|a@b\.c|"views":3/, 'nothing of the revoked consent')
  t.match(JSON.parse(revoked), [{ id: 'c1', locked: true }])
})
