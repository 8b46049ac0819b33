// A data subject's consents and data on a real shard: the subject index and
// its pages, what a consent records of its client and last change, the
// relation-owner index kept by every write and delete, the subject export
// scan read slice by slice, and the format 6 migration that builds both
// indexes for a shard of format 5.
import t from 'tap'
import { createConsent, listSubjectConsents, revokeConsent } from '../../workers/store/consents'
import { deleteNode, putNode } from '../../workers/store/nodes'
import { deleteRelation, incrementCounter, putRelation } from '../../workers/store/relations'
import { migrateShard } from '../../workers/store/migrate-shard'
import { SubjectExportScan } from '../../workers/store/subject-export'
import { SLICE_ITEMS } from '../../workers/store/scans'
import { consentKey } from '../../workers/store/keys'
import { bodyOf, customer, knows, listed, product, tempShard, viewed, writeCtx, type TempShard } from '../helpers/temp-shard'

type Entry = Record<string, unknown>
const TENANT = { kind: 'tenant' } as const

const list = (s: TempShard, subject: string, after?: string, limit?: number): Entry[] => bodyOf(listSubjectConsents(s.store, 'demo', subject, after, limit)) as Entry[]

async function consentOf(s: TempShard, subject: string, client?: string): Promise<string> {
  const r = await s.write((sc) => createConsent(sc.store, 'demo', subject, sc.now, client))
  return (bodyOf(r) as { consentReference: string }).consentReference
}

/** Every element the scan yields, stepping until done; also how many steps it took. */
function exportAll(s: TempShard, subject: string): { elements: Entry[]; steps: number } {
  const scan = new SubjectExportScan('demo', subject, JSON.stringify({ kind: 'subject', subject }))
  const elements: Entry[] = []
  for (let steps = 1; ; steps++) {
    const slice = scan.step(s.context())
    elements.push(...slice.chunks.map((c) => JSON.parse(c) as Entry))
    if (slice.done) return { elements, steps }
  }
}

t.test("a subject's consents, in reference order, a page at a time", async (t) => {
  const s = tempShard(t)
  const mine = [await consentOf(s, 'alice', 'shop-app'), await consentOf(s, 'alice'), await consentOf(s, 'alice', 'shop-app')].sort()
  await consentOf(s, 'bob')
  await consentOf(s, 'alicia')
  const all = list(s, 'alice')
  t.same(all.map((c) => c.consentReference), mine, "alice's three, none of bob's or alicia's")
  t.equal(all.filter((c) => c.clientId === 'shop-app').length, 2, 'the client is recorded')
  t.ok(all.every((c) => c.created === s.clock.time && c.changed === s.clock.time), 'created and changed at creation')
  t.equal(all.filter((c) => !('clientId' in c)).length, 1, 'a token without a client records none')
  t.same(list(s, 'alice', undefined, 2).map((c) => c.consentReference), mine.slice(0, 2), 'limit')
  t.same(list(s, 'alice', mine[1]).map((c) => c.consentReference), mine.slice(2), 'after a reference')
  t.same(list(s, 'alice', undefined, 0), [], 'limit 0')
  t.same(list(s, 'nobody'), [])

  await s.write((sc) => revokeConsent(sc.store, 'demo', mine[0]!, TENANT, sc.shred))
  const revoked = list(s, 'alice').find((c) => c.consentReference === mine[0])!
  t.equal(revoked.status, 'revoked')
  t.ok((revoked.changed as number) >= (revoked.created as number), 'the revocation is its last change')
})

t.test('the relation-owner index follows every relation write and delete', async (t) => {
  const s = tempShard(t)
  const ref = await consentOf(s, 'alice')
  const owned = (): string[] => [...s.store.ownedRelations.getKeys()].map((k) => (k as string[]).slice(1).join('/'))
  await s.write((sc) => {
    putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 1 }, writeCtx(ref))
    incrementCounter(sc, 'demo', viewed('c1', 'p2'), 'views', writeCtx(ref))
    putRelation(sc, 'demo', listed('p1', 'p2'), {}, writeCtx(ref))
    putRelation(sc, 'demo', knows(customer('c1'), customer('c2')), {}, writeCtx(ref))
  })
  t.same(owned().sort(), [
    `${ref}/core/customer/c1/core/customer/c2/core/knows/r1`,
    `${ref}/core/customer/c1/core/product/p1/core/viewed/r1`,
    `${ref}/core/customer/c1/core/product/p2/core/viewed/r1`,
    'TENANT/core/product/p1/core/product/p2/core/listed/r1',
  ].sort(), "each relation under its owner (the tenant's relation under TENANT)")
  await s.write((sc) => deleteRelation(sc, 'demo', viewed('c1', 'p1'), undefined))
  t.equal(owned().length, 3, 'a deleted relation leaves the index')
  await s.write((sc) => deleteNode(sc, 'demo', customer('c1'), undefined))
  t.same(owned(), ['TENANT/core/product/p1/core/product/p2/core/listed/r1'], "a deleted node's relations leave it too")
})

t.test('the export: the head, the consents, then the granted consents\' nodes and relations, slice by slice', async (t) => {
  const s = tempShard(t)
  const granted = await consentOf(s, 'alice', 'shop-app')
  const gone = await consentOf(s, 'alice')
  const other = await consentOf(s, 'bob')
  const NODES = SLICE_ITEMS * 2 + 7
  await s.write((sc) => {
    for (let i = 0; i < NODES; i++) putNode(sc, 'demo', customer(`a${i}`), { name: `Alice ${i}` }, writeCtx(granted))
    incrementCounter(sc, 'demo', viewed('a0', 'p1'), 'views', writeCtx(granted))
    putNode(sc, 'demo', product('p1'), { title: 'Lamp' }, writeCtx(granted))
    putNode(sc, 'demo', customer('old'), { name: 'Old Alice' }, writeCtx(gone))
    putNode(sc, 'demo', customer('b'), { name: 'Bob' }, writeCtx(other))
  })
  await s.write((sc) => revokeConsent(sc.store, 'demo', gone, TENANT, sc.shred))
  const { elements, steps } = exportAll(s, 'alice')
  t.ok(steps >= 3, `read in ${steps} slices`)
  t.same(elements[0], { kind: 'subject', subject: 'alice' }, 'the head first')
  const consents = elements.filter((e) => e.kind === 'consent')
  t.same(consents.map((c) => c.consentReference).sort(), [granted, gone].sort())
  t.match(consents.find((c) => c.consentReference === gone), { status: 'revoked', erased: true })
  t.notOk('erased' in consents.find((c) => c.consentReference === granted)!)
  const nodes = elements.filter((e) => e.kind === 'node')
  t.equal(nodes.length, NODES, 'every node of the granted consent once, none of the revoked one or of bob, nor the tenant\'s product')
  t.equal(new Set(nodes.map((n) => (n.node as Entry).id)).size, NODES)
  t.match(nodes[0], { owner: granted, createdBy: 'client-1', properties: { name: /^Alice / } })
  t.match(elements.filter((e) => e.kind === 'relation'), [{ from: { id: 'a0' }, to: { id: 'p1' }, owner: granted, properties: { views: 1 } }])
  t.same(elements.map((e) => e.kind).filter((k, i, all) => i === 0 || all[i - 1] !== k), ['subject', 'consent', 'node', 'relation'], 'in that order')
  t.same(exportAll(s, 'nobody').elements, [{ kind: 'subject', subject: 'nobody' }], 'a subject without consents: the head alone')
})

t.test('format 6 migration builds the subject and relation-owner indexes of a format-5 shard', async (t) => {
  const s = tempShard(t)
  const ref = await consentOf(s, 'alice', 'shop-app')
  await s.write((sc) => {
    putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 1 }, writeCtx(ref))
    putRelation(sc, 'demo', listed('p1', 'p2'), {}, writeCtx(ref))
  })
  const subjects = [...s.store.subjects.getKeys()]
  const relations = [...s.store.ownedRelations.getKeys()]
  // What a format-5 shard holds: no indexes, consents without client or change time.
  await s.write(() => {
    for (const k of subjects) s.store.subjects.removeSync(k)
    for (const k of relations) s.store.ownedRelations.removeSync(k)
    const { client, changed, ...older } = s.store.consents.get(consentKey('demo', ref))!
    t.equal(client, 'shop-app')
    t.type(changed, 'number')
    s.store.consents.putSync(consentKey('demo', ref), older)
  })
  s.store.cache.consents.clear()
  t.same(list(s, 'alice'), [], 'before: the index is empty')
  migrateShard(s.store, 5, 6)
  t.same([...s.store.subjects.getKeys()], subjects, 'the subject index rebuilt')
  t.same([...s.store.ownedRelations.getKeys()], relations, 'the relation-owner index rebuilt')
  t.same(list(s, 'alice'), [{ consentReference: ref, subject: 'alice', status: 'granted', revokedProperties: [], created: s.clock.time }], 'an older consent lists without client and change time')
  migrateShard(s.store, 5, 6)
  t.same([...s.store.subjects.getKeys()], subjects, 'idempotent')
})
