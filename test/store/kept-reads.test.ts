// Whole reads served from memory while their shard is not written
// (workers/store/kept-reads.ts, write-generations.ts): neighbourhoods and,
// at the end, single get-node and get-relation answers. Each test
// first shows a kept neighbourhood is what a read serves (a marked copy of
// it comes back), then makes one change and finds the next read, in the next
// message (observeWrites), reads the shard again: a write in a transaction, a
// write outside one (transactionSync), a write seen by a read-only copy of
// the shard opened on the same thread, a consent drop, a failed transaction.
import t, { type Test } from 'tap'
import { forgetConsent, grantConsent, revokeConsent } from '../../workers/store/consents'
import { ANSWER_LIMIT, KEPT_CHARS_LIMIT, cachedNeighbourhood, forgetKeptReads, keepAnswer, keepNeighbourhood, keptAnswer, NEIGHBOURHOOD_LIMIT, observedWrites, observeWrites } from '../../workers/store/kept-reads'
import { getNode, putNode } from '../../workers/store/nodes'
import { getRelation, putRelation } from '../../workers/store/relations'
import { LOCKED_PLACEHOLDER } from '../../workers/store/records'
import type { OpResult } from '../../workers/store/result'
import { NeighboursScan, REPEAT_SCAN_CACHE_BUDGET, forgetReadSources, type Slice } from '../../workers/store/scans'
import { PLAIN_CACHE_LIMIT, elementId, rememberPlain } from '../../workers/store/sealing'
import { nodeKey, relationKey } from '../../workers/store/keys'
import { closeShard, forgetUncommitted, openShard, type PlainEntry, type ShardStore } from '../../workers/store/shard-store'
import type { ShardContext } from '../../workers/store/context'
import { writeGeneration } from '../../workers/store/write-generations'
import { customer, product, tempShard, viewed, writeCtx, type TempShard } from '../helpers/temp-shard'

const TENANT = { kind: 'tenant' } as const
const KEY = elementId(nodeKey('demo', customer('c1')))

/**
 * What the actor does at the start of each message (workers/shard-actor.ts):
 * observe the shard's write counter, then renew a read-only copy's snapshot
 * (lmdb-js keeps it until a zero timeout fires, which may not have fired yet
 * after the writer's commit: workers/actor/readers.ts).
 */
function beginMessage(sc: ShardContext): void {
  observeWrites([sc.store.shard])
  if (sc.store.reader) sc.store.env.resetReadTxn()
}

/** c1's whole neighbours answer, read as one message of the actor reads it: begin the message, then scan. */
function neighbours(sc: ShardContext): string {
  beginMessage(sc)
  const scan = new NeighboursScan('demo', customer('c1'))
  const chunks: string[] = []
  for (let slice: Slice = scan.step(sc); ; slice = scan.step(sc)) {
    chunks.push(...slice.chunks)
    if (slice.done) return `[${chunks.join(',')}]`
  }
}

/** c1 viewed p1 and p2. */
async function graph(s: TempShard): Promise<string> {
  const ref = await s.consent('demo')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'Secret Name' }, writeCtx(ref))
    for (const p of ['p1', 'p2']) {
      putNode(sc, 'demo', product(p), { title: `Lamp ${p}` }, writeCtx(ref))
      putRelation(sc, 'demo', viewed('c1', p), { views: 3 }, writeCtx(ref))
    }
  })
  return ref
}

/** Reads twice (the second keeps it whole), marks the kept entry, and checks the mark is what the next read serves. */
function keepAndMark(t: Test, store: ShardStore, sc: () => ShardContext): string {
  forgetKeptReads()
  const plain = neighbours(sc())
  t.match(plain, /Secret Name/)
  t.equal(neighbours(sc()), plain, 'the second read gives the same answer')
  const kept = cachedNeighbourhood(store.shard, KEY)
  if (kept === undefined) throw new Error('the neighbourhood was not kept')
  t.equal(kept.neighbours.length, 2)
  keepNeighbourhood(store.shard, KEY, { ...kept, source: kept.source.replace('Secret Name', 'MARKED') }, observedWrites(store.shard)!)
  t.match(neighbours(sc()), /MARKED/, 'while nothing is written, the kept neighbourhood is served')
  return plain
}

t.teardown(() => forgetKeptReads())

t.test('a kept neighbourhood is the exact answer a fresh read gives', async (t) => {
  const s = tempShard(t)
  await graph(s)
  const fresh = neighbours(s.context())
  s.store.cache.plain.clear()
  forgetKeptReads()
  t.equal(neighbours(s.context()), fresh, 'cold')
  t.ok(cachedNeighbourhood(s.store.shard, KEY), 'kept')
  t.equal(neighbours(s.context()), fresh, 'from memory')
})

t.test('a write in a transaction: the next message reads the shard again', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  keepAndMark(t, s.store, () => s.context())
  const before = writeGeneration(s.store.shard)
  await s.write((sc) => putRelation(sc, 'demo', viewed('c1', 'p2'), { views: 4 }, writeCtx(ref)))
  t.ok(writeGeneration(s.store.shard) > before, 'the commit raised the counter before it was answered')
  const after = neighbours(s.context())
  t.notMatch(after, /MARKED/)
  t.match(after, /"views":4/)
})

t.test('a write outside a transaction (transactionSync, putSync) is counted too', async (t) => {
  const s = tempShard(t)
  await graph(s)
  keepAndMark(t, s.store, () => s.context())
  s.store.env.transactionSync(() => undefined)
  t.notMatch(neighbours(s.context()), /MARKED/, 'after the environment\'s transactionSync')
  keepAndMark(t, s.store, () => s.context())
  s.store.counts.putSync(['unrelated'], 1)
  t.notMatch(neighbours(s.context()), /MARKED/, 'after a database\'s putSync')
})

t.test('a read-only copy of the shard on this thread sees the writer\'s commits', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  const reader = openShard(s.dir, 0, s.masterKey, 1_000_000, true)
  t.teardown(() => closeShard(reader))
  const readerContext = (): ShardContext => ({ ...s.context(), store: reader })
  keepAndMark(t, reader, readerContext)
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Other Name' }, writeCtx(ref)))
  const after = neighbours(readerContext())
  t.notMatch(after, /MARKED|Secret Name/)
  t.match(after, /Other Name/)
})

/** Keeps and marks (`mark`), then drops it three ways in turn: a consent drop, a failed transaction, a revocation (committed last). */
async function dropEachWay(t: Test, s: TempShard, ref: string, mark: () => void, kept: () => unknown): Promise<void> {
  mark()
  forgetConsent(s.store, 'demo', ref)
  t.equal(kept(), undefined, 'a consent drop (every thread runs it before a change is answered)')
  mark()
  forgetUncommitted(s.store)
  t.equal(kept(), undefined, 'a failed transaction')
  mark()
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
}

t.test('a consent drop, a failed transaction and a revocation each drop what is kept', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  await dropEachWay(t, s, ref, () => keepAndMark(t, s.store, () => s.context()), () => cachedNeighbourhood(s.store.shard, KEY))
  const after = neighbours(s.context())
  t.notMatch(after, /MARKED|Secret Name/, 'revoked: nothing of the consent is served')
})

/** c1 with a relation to each of p0..p(n-1). */
async function hub(s: TempShard, ref: string, n: number): Promise<void> {
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'Secret Name' }, writeCtx(ref))
    for (let i = 0; i < n; i++) putRelation(sc, 'demo', viewed('c1', `p${i}`), { views: i }, writeCtx(ref))
  })
}

t.test('kept only when every piece is one the element cache holds; a large one too, sent as one slice', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await hub(s, ref, 40)
  s.store.cache.plain.clear()
  forgetKeptReads()
  forgetReadSources()
  neighbours(s.context())
  t.equal(cachedNeighbourhood(s.store.shard, KEY), undefined, '81 elements, a cold cache: a first read adds only 64 of them, so it is not kept')
  neighbours(s.context())
  t.ok(cachedNeighbourhood(s.store.shard, KEY), 'the next read finds every piece cached and keeps it')

  await hub(s, ref, 400)
  let fresh = ''
  for (let i = 0; i < 16; i++) fresh = neighbours(s.context())
  t.ok(s.store.cache.plain.size > 800, 'every element of the large neighbourhood is in the element cache')
  t.ok(cachedNeighbourhood(s.store.shard, KEY), 'a neighbourhood read over several steps is kept too')
  observeWrites([s.store.shard])
  const scan = new NeighboursScan('demo', customer('c1'))
  const first = scan.step(s.context())
  t.ok(first.done, 'a kept one is sent whole in the first step')
  t.equal(`[${first.chunks.join(',')}]`, fresh, 'the same answer')
})

t.test('a large neighbourhood is not kept when a commit is counted while it is read, nor past KEPT_CHARS_LIMIT', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await hub(s, ref, 400)
  for (let i = 0; i < 16; i++) neighbours(s.context())
  forgetKeptReads()
  observeWrites([s.store.shard])
  const scan = new NeighboursScan('demo', customer('c1'))
  t.notOk(scan.step(s.context()).done, 'read over several steps')
  await s.write((sc) => putNode(sc, 'demo', product('elsewhere'), { title: 'x' }, writeCtx(ref)))
  while (!scan.step(s.context()).done);
  t.equal(cachedNeighbourhood(s.store.shard, KEY), undefined, 'a commit counted meanwhile: not kept')

  await s.write((sc) => {
    for (let i = 400; i < 1800; i++) putRelation(sc, 'demo', viewed('c1', `p${i}`), { views: i }, writeCtx(ref))
  })
  let text = ''
  for (let i = 0; i < 64; i++) text = neighbours(s.context())
  t.ok(text.length > KEPT_CHARS_LIMIT, `the answer is ${text.length} characters`)
  t.equal(cachedNeighbourhood(s.store.shard, KEY), undefined, 'longer than KEPT_CHARS_LIMIT: not kept')
})

/** c1's neighbours read from a cold cache, as the actor does, one step per message; its slices. */
function slicesOfRead(sc: () => ShardContext, between?: () => Promise<void>): Promise<Slice[]> {
  sc().store.cache.plain.clear()
  forgetKeptReads()
  forgetReadSources()
  observeWrites([sc().store.shard])
  const scan = new NeighboursScan('demo', customer('c1'))
  const slices = [scan.step(sc())]
  return (async () => {
    if (between !== undefined) await between()
    while (!slices[slices.length - 1]!.done) slices.push(scan.step(sc()))
    return slices
  })()
}

t.test('the last slice of a neighbours read carries its stamp when no commit was counted during it, kept on this thread or not', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await hub(s, ref, 400)
  const quiet = await slicesOfRead(() => s.context())
  t.ok(quiet.length > 1, `read over ${quiet.length} steps`)
  t.equal(cachedNeighbourhood(s.store.shard, KEY), undefined, 'a cold cache: this thread did not keep it')
  t.equal(quiet[quiet.length - 1]!.kept, writeGeneration(s.store.shard), 'the last slice says the whole answer is true at this count')
  t.ok(quiet.slice(0, -1).every((slice) => slice.kept === undefined), 'no other slice says so')

  const written = await slicesOfRead(() => s.context(), () => s.write((sc) => { putNode(sc, 'demo', product('elsewhere'), { title: 'x' }, writeCtx(ref)) }))
  t.equal(written[written.length - 1]!.kept, undefined, 'a commit counted while it was read: no stamp')

  // Revoked, then granted again: what was sealed under the destroyed key is locked.
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
  await s.write((sc) => grantConsent(sc.store, 'demo', ref, TENANT))
  forgetConsent(s.store, 'demo', ref)
  const locked = await slicesOfRead(() => s.context())
  t.match(locked.map((slice) => slice.chunks.join(',')).join(','), /"locked":true/)
  t.equal(locked[locked.length - 1]!.kept, undefined, 'an answer with a locked element: no stamp')
})

t.test('the element cache evicting: kept neighbourhoods stay while no rendered chunk goes, and go when one does', async (t) => {
  const s = tempShard(t)
  await graph(s)
  const plain = s.store.cache.plain
  plain.clear()
  forgetKeptReads()
  const filler = (n: number): PlainEntry => ({ o: 'x', k: 0, f: '', p: `{"n":${n}}` })
  let next = 0
  // Elements a write or a list cached (no rendered chunk) fill the cache first, then the neighbourhood is read.
  while (plain.size < PLAIN_CACHE_LIMIT - 10) rememberPlain(plain, `filler-${next}`, filler(next++))
  neighbours(s.context())
  neighbours(s.context())
  t.ok(cachedNeighbourhood(s.store.shard, KEY), 'kept')
  while (plain.size < PLAIN_CACHE_LIMIT) rememberPlain(plain, `filler-${next}`, filler(next++))
  rememberPlain(plain, `filler-${next}`, filler(next++))
  t.ok(plain.size < PLAIN_CACHE_LIMIT, 'the oldest tenth went')
  t.ok(cachedNeighbourhood(s.store.shard, KEY), 'none of them had a rendered chunk: the neighbourhood stays')
  while (plain.has(elementId(nodeKey('demo', customer('c1'))))) rememberPlain(plain, `filler-${next}`, filler(next++))
  t.equal(cachedNeighbourhood(s.store.shard, KEY), undefined, 'its own chunks evicted: it goes with them')
})

t.test('a shard this thread has not observed keeps nothing', async (t) => {
  forgetKeptReads()
  keepNeighbourhood(99, KEY, { source: 'x', neighbours: [] }, 0)
  t.equal(cachedNeighbourhood(99, KEY), undefined)
  t.ok(NEIGHBOURHOOD_LIMIT >= 10_000, 'the bound holds a 10,000-customer working set')
})

/** c1's get-node answer, read as one message of the actor reads it: begin the message, then read. */
function nodeAnswer(sc: ShardContext, id = 'c1'): OpResult {
  beginMessage(sc)
  return getNode(sc, 'demo', customer(id))
}

const bodyOf = (r: OpResult): string | undefined => (r.kind === 'ok' ? r.body : r.type)

/** Reads c1 once (kept), marks the kept answer, and checks the mark is what the next read serves. */
function keepAndMarkAnswer(t: Test, store: ShardStore, sc: () => ShardContext): void {
  forgetKeptReads()
  t.match(bodyOf(nodeAnswer(sc())), /Secret Name/)
  const kept = keptAnswer(store.shard, KEY)
  if (kept === undefined) throw new Error('the answer was not kept')
  keepAnswer(store.shard, KEY, kept.replace('Secret Name', 'MARKED'), observedWrites(store.shard))
  t.match(bodyOf(nodeAnswer(sc())), /MARKED/, 'while nothing is written, the kept answer is served')
}

t.test('a kept single answer is the exact answer a fresh read gives, for a node and a relation', async (t) => {
  const s = tempShard(t)
  await graph(s)
  forgetKeptReads()
  s.store.cache.plain.clear()
  const fresh = bodyOf(nodeAnswer(s.context()))
  t.equal(keptAnswer(s.store.shard, KEY), fresh, 'kept as read')
  t.equal(bodyOf(nodeAnswer(s.context())), fresh, 'from memory')
  const relation = (): string | undefined => {
    observeWrites([s.store.shard])
    return bodyOf(getRelation(s.context(), 'demo', viewed('c1', 'p1')))
  }
  const freshRelation = relation()
  t.match(freshRelation, /"views":3/)
  t.equal(relation(), freshRelation, 'a relation from memory')
  t.ok(keptAnswer(s.store.shard, elementId(relationKey('demo', viewed('c1', 'p1')))), 'the relation\'s answer is kept')
})

t.test('a kept single answer: a write, a read-only copy, a consent drop, a failed transaction and a revocation', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  keepAndMarkAnswer(t, s.store, () => s.context())
  await s.write((sc) => putNode(sc, 'demo', product('elsewhere'), { title: 'x' }, writeCtx(ref)))
  t.match(bodyOf(nodeAnswer(s.context())), /Secret Name/, 'a write to another element of the shard: read again')

  const reader = openShard(s.dir, 0, s.masterKey, 1_000_000, true)
  t.teardown(() => closeShard(reader))
  const readerContext = (): ShardContext => ({ ...s.context(), store: reader })
  keepAndMarkAnswer(t, reader, readerContext)
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Other Name' }, writeCtx(ref)))
  t.match(bodyOf(nodeAnswer(readerContext())), /Other Name/, 'a read-only copy on this thread sees the writer\'s commit')

  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Secret Name' }, writeCtx(ref)))
  await dropEachWay(t, s, ref, () => keepAndMarkAnswer(t, s.store, () => s.context()), () => keptAnswer(s.store.shard, KEY))
  const revoked = nodeAnswer(s.context())
  t.equal(revoked.kind, 'error', 'revoked: the consent error, not the data')
  t.notMatch(bodyOf(revoked), /MARKED|Secret Name/)
  t.equal(keptAnswer(s.store.shard, KEY), undefined, 'and a revoked answer is not kept')
})

t.test('404 and the locked placeholder are not kept; at ANSWER_LIMIT every kept answer goes', async (t) => {
  const s = tempShard(t)
  const ref = await graph(s)
  forgetKeptReads()
  t.equal(bodyOf(nodeAnswer(s.context(), 'missing')), 'element_not_found')
  t.equal(keptAnswer(s.store.shard, elementId(nodeKey('demo', customer('missing')))), undefined, '404: not kept')
  // Revoked, then granted again: what was sealed under the destroyed key stays locked.
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
  await s.write((sc) => grantConsent(sc.store, 'demo', ref, TENANT))
  forgetConsent(s.store, 'demo', ref)
  t.equal(bodyOf(nodeAnswer(s.context())), LOCKED_PLACEHOLDER, 'locked')
  t.equal(keptAnswer(s.store.shard, KEY), undefined, 'the locked placeholder: not kept')

  await s.write((sc) => putNode(sc, 'demo', customer('c2'), { name: 'Another' }, writeCtx(ref)))
  const c2 = elementId(nodeKey('demo', customer('c2')))
  nodeAnswer(s.context(), 'c2')
  const observed = observedWrites(s.store.shard)
  for (let i = 0; i < ANSWER_LIMIT - 1; i++) keepAnswer(s.store.shard, `filler-${i}`, '{}', observed)
  t.ok(keptAnswer(s.store.shard, c2), 'c2 kept among ANSWER_LIMIT answers')
  keepAnswer(s.store.shard, 'one-more', '{}', observed)
  t.equal(keptAnswer(s.store.shard, c2), undefined, 'past the limit: all dropped')
  t.equal(keptAnswer(s.store.shard, 'one-more'), '{}', 'and the new one kept')
})

t.test('a hub read a second time on the thread is cached, and kept, whole; a first read of another adds only 64 elements', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => {
    for (const hub of ['c1', 'c2']) {
      putNode(sc, 'demo', customer(hub), { name: 'Secret Name' }, writeCtx(ref))
      for (let i = 0; i < 400; i++) putRelation(sc, 'demo', viewed(hub, `p${i}`), { views: i }, writeCtx(ref))
    }
  })
  s.store.cache.plain.clear()
  forgetKeptReads()
  forgetReadSources()
  const first = neighbours(s.context())
  t.ok(s.store.cache.plain.size <= 64, `a first read of the hub (801 elements) added ${s.store.cache.plain.size} to the element cache`)
  t.equal(neighbours(s.context()), first, 'the second read: the same answer')
  t.ok(s.store.cache.plain.size >= 801 && 801 <= REPEAT_SCAN_CACHE_BUDGET, `read again, it added the rest (${s.store.cache.plain.size} cached)`)
  t.ok(cachedNeighbourhood(s.store.shard, KEY), 'and was kept whole')
  const before = s.store.cache.plain.size
  observeWrites([s.store.shard])
  const other = new NeighboursScan('demo', customer('c2'))
  while (!other.step(s.context()).done);
  t.ok(s.store.cache.plain.size - before <= 64, `a first read of another hub added ${s.store.cache.plain.size - before}`)
})
