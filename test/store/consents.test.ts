// Consents on a real shard: create, read, revoke, grant again and revoked
// properties, and what reads and writes answer for data of a revoked
// consent (consent_revoked) and of one granted again (locked: the old key
// is destroyed, the data stays sealed under it).
import t from 'tap'
import {
  createConsent, finishRevocations, getConsentRecord, grantConsent, readConsent, revokeConsent, setRevokedProperties, tenantSlot,
} from '../../workers/store/consents'
import { getNode, getNodeProperty, putNode } from '../../workers/store/nodes'
import { operationTable, runOperation } from '../../workers/actor/operations'
import { migrateShard } from '../../workers/store/migrate-shard'
import { getRelation, putRelation } from '../../workers/store/relations'
import { LOCKED_PLACEHOLDER } from '../../workers/store/records'
import { bodyOf, customer, outcome, product, tempShard, viewed, writeCtx } from '../helpers/temp-shard'

const TENANT = { kind: 'tenant' } as const
const subject = (sub: string) => ({ kind: 'subject', sub }) as const

t.test('a new consent is granted, has its own key slot and reads back', async (t) => {
  const s = tempShard(t)
  const r = await s.write((sc) => createConsent(sc.store, 'demo', 'alice', sc.now))
  t.equal(outcome(r), 201)
  const ref = (bodyOf(r) as { consentReference: string }).consentReference
  t.match(ref, /^cr_[A-Za-z0-9_-]{22}$/)
  const other = await s.consent('demo', 'bob')
  const a = getConsentRecord(s.store, 'demo', ref)!
  const b = getConsentRecord(s.store, 'demo', other)!
  t.not(a.slot, b.slot, 'each consent has its own data key')
  t.ok(s.store.keys.get(a.slot))
  t.same(a, { subject: 'alice', status: 'granted', slot: a.slot, revokedProperties: [], created: s.clock.time, changed: s.clock.time })
  t.same(bodyOf(readConsent(s.store, 'demo', ref, TENANT)), { consentReference: ref, subject: 'alice', status: 'granted', revokedProperties: [] })
  t.equal(outcome(readConsent(s.store, 'demo', ref, subject('alice'))), 200, 'its subject may read it')
  t.equal(outcome(readConsent(s.store, 'demo', ref, subject('bob'))), 'forbidden', 'another subject may not')
  t.equal(outcome(readConsent(s.store, 'other', ref, TENANT)), 'element_not_found', 'another tenant does not have it')
  t.equal(outcome(readConsent(s.store, 'demo', 'cr_missing', TENANT)), 'element_not_found')
})

t.test('only the tenant or the subject may revoke, grant or set revoked properties', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo', 'alice')
  const shred: number[] = []
  t.equal(outcome(await s.write((sc) => revokeConsent(sc.store, 'demo', ref, subject('bob'), shred))), 'forbidden')
  t.same(shred, [])
  t.equal(outcome(await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, ['x'], subject('bob')))), 'forbidden')
  t.equal(outcome(await s.write((sc) => grantConsent(sc.store, 'demo', ref, subject('bob')))), 'forbidden')
  t.equal(getConsentRecord(s.store, 'demo', ref)!.status, 'granted')
  t.same(getConsentRecord(s.store, 'demo', ref)!.revokedProperties, [])
  t.equal(outcome(await s.write((sc) => revokeConsent(sc.store, 'demo', 'cr_missing', TENANT, sc.shred))), 'element_not_found')
  t.equal(outcome(await s.write((sc) => grantConsent(sc.store, 'demo', 'cr_missing', TENANT))), 'element_not_found')
  t.equal(outcome(await s.write((sc) => setRevokedProperties(sc.store, 'demo', 'cr_missing', [], TENANT))), 'element_not_found')
  t.equal(outcome(await s.write((sc) => revokeConsent(sc.store, 'demo', ref, subject('alice'), sc.shred))), 204, 'the subject may')
  t.equal(outcome(await s.write((sc) => grantConsent(sc.store, 'demo', ref, subject('alice')))), 204)
})

t.test("revoking destroys the consent's key after the commit; its data answers consent_revoked and takes no writes", async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(ref))
    putRelation(sc, 'demo', viewed('c1', 'p1'), { views: 1 }, writeCtx(ref))
  })
  const slot = getConsentRecord(s.store, 'demo', ref)!.slot
  getNode(s.context(), 'demo', customer('c1'))
  getRelation(s.context(), 'demo', viewed('c1', 'p1'))
  t.ok([...s.store.cache.plain.values()].some((e) => e.o === ref), 'its elements, once read, are in the decrypted cache')
  const revoked = await s.write((sc) => {
    const r = revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred)
    t.same(sc.shred, [slot], 'the slot is named for destruction')
    t.ok(sc.store.keyFile.read(slot), 'and not destroyed inside the transaction')
    return r
  })
  t.equal(outcome(revoked), 204)
  t.equal(s.store.keyFile.read(slot), undefined, 'destroyed once committed')
  t.equal(s.store.keys.get(slot), undefined)
  t.notOk([...s.store.cache.plain.values()].some((e) => e.o === ref), 'nothing of it stays decrypted in memory')
  t.equal(getConsentRecord(s.store, 'demo', ref)!.status, 'revoked')

  t.match(getNode(s.context(), 'demo', customer('c1')), { kind: 'error', type: 'consent_revoked', message: 'consent to node core/customer/c1 is revoked' })
  t.equal(outcome(getNodeProperty(s.context(), 'demo', customer('c1'), 'name')), 'consent_revoked')
  t.equal(outcome(getRelation(s.context(), 'demo', viewed('c1', 'p1'))), 'consent_revoked')
  t.match(await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'B' }, writeCtx(ref))), { kind: 'error', type: 'forbidden', message: /is revoked/ })
  t.equal(outcome(await s.write((sc) => putNode(sc, 'demo', customer('c2'), {}, writeCtx(ref)))), 'forbidden', 'nor new data')
  t.equal(outcome(getNode(s.context(), 'demo', product('p1'))), 200, 'tenant-owned data it created is not its data')

  const again: number[] = []
  t.equal(outcome(await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, again))), 204, 'revoking twice is fine')
  t.same(again, [], 'and destroys nothing more')
})

t.test('granting again makes a new key: old data is locked, new writes start afresh', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada', age: 36 }, writeCtx(ref)))
  const oldSlot = getConsentRecord(s.store, 'demo', ref)!.slot
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
  t.equal(outcome(await s.write((sc) => grantConsent(sc.store, 'demo', ref, TENANT))), 204)
  const c = getConsentRecord(s.store, 'demo', ref)!
  t.equal(c.status, 'granted')
  t.not(c.slot, oldSlot, 'a new slot')
  t.ok(s.store.keys.get(c.slot))
  t.equal(s.store.keyFile.read(oldSlot), undefined, 'the old key stays destroyed')

  const locked = getNode(s.context(), 'demo', customer('c1'))
  t.same(locked, { kind: 'ok', status: 200, body: LOCKED_PLACEHOLDER, total: undefined }, 'locked, not revoked')
  t.match(getNodeProperty(s.context(), 'demo', customer('c1'), 'name'), { kind: 'error', type: 'consent_revoked', message: /sealed under a key that no longer exists/ })

  t.equal(outcome(await s.write((sc) => putNode(sc, 'demo', customer('c1'), { age: 40 }, writeCtx(ref)))), 204)
  const fresh = bodyOf(getNode(s.context(), 'demo', customer('c1'))) as Record<string, unknown>
  t.equal(fresh.age, 40)
  t.notOk('name' in fresh, 'the locked properties are dropped, not merged')
  t.equal(s.store.nodes.get(['demo', 'core', 'customer', 'c1'])!.k, c.slot, 'sealed under the new key')
  t.equal(s.store.counts.get(['demo', 'core', 'customer']), 1, 'a locked node written again is not a new node')

  t.equal(outcome(await s.write((sc) => grantConsent(sc.store, 'demo', ref, TENANT))), 204)
  t.equal(getConsentRecord(s.store, 'demo', ref)!.slot, c.slot, 'granting a granted consent changes nothing')
})

t.test('revoke and grant in one batch: the writes after each see it', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(ref)))
  const oldSlot = getConsentRecord(s.store, 'demo', ref)!.slot
  const results = await s.write((sc) => [
    revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred),
    putNode(sc, 'demo', customer('c2'), {}, writeCtx(ref)),
    grantConsent(sc.store, 'demo', ref, TENANT),
    putNode(sc, 'demo', customer('c3'), { name: 'C' }, writeCtx(ref)),
  ])
  t.same(results.map(outcome), [204, 'forbidden', 204, 204])
  t.equal(s.store.keyFile.read(oldSlot), undefined)
  t.match(getNode(s.context(), 'demo', customer('c1')), { kind: 'ok', body: LOCKED_PLACEHOLDER })
  t.match(bodyOf(getNode(s.context(), 'demo', customer('c3'))), { name: 'C' }, "written under the new key, which survives the old one's destruction")
})

t.test('revoked properties are a set, replaced as a whole; the consent record says them', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo', 'alice')
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, ['email', 'age', 'email'], subject('alice')))
  t.same(getConsentRecord(s.store, 'demo', ref)!.revokedProperties, ['email', 'age'])
  t.match(bodyOf(readConsent(s.store, 'demo', ref, TENANT)), { revokedProperties: ['email', 'age'] })
  await s.write((sc) => setRevokedProperties(sc.store, 'demo', ref, ['name'], TENANT))
  t.same(getConsentRecord(s.store, 'demo', ref)!.revokedProperties, ['name'])
})

t.test('a consent record and its cache agree after a restart; start-up finishes an interrupted revocation', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(ref)))
  const slot = getConsentRecord(s.store, 'demo', ref)!.slot
  // The revocation commits, then the process dies before the slot is destroyed.
  const lost: number[] = []
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, lost))
  await s.reopen()
  t.ok(s.store.keyFile.read(slot), 'the key survived the crash')
  t.equal(getConsentRecord(s.store, 'demo', ref)!.status, 'revoked', 'the record is on disk')
  t.equal(outcome(getNode(s.context(), 'demo', customer('c1'))), 'consent_revoked', 'reads already refuse')
  t.equal(finishRevocations(s.store), 1)
  t.equal(s.store.keyFile.read(slot), undefined)
})

t.test("a tenant's own key is created once, on the first tenant-owned write, and survives consent changes", async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  t.equal(tenantSlot(s.store, 'demo', false), undefined)
  await s.write((sc) => putNode(sc, 'demo', product('p1'), { title: 'Lamp' }, writeCtx(ref)))
  const slot = tenantSlot(s.store, 'demo', false)
  t.type(slot, 'number')
  await s.write((sc) => putNode(sc, 'demo', product('p2'), {}, writeCtx(ref)))
  t.equal(tenantSlot(s.store, 'demo', false), slot)
  await s.write((sc) => revokeConsent(sc.store, 'demo', ref, TENANT, sc.shred))
  t.match(bodyOf(getNode(s.context(), 'demo', product('p1'))), { title: 'Lamp' })
  await s.reopen()
  t.equal(tenantSlot(s.store, 'demo', false), slot, 'kept on disk')
  t.match(bodyOf(getNode(s.context(), 'demo', product('p1'))), { title: 'Lamp' })
})

t.test('after a revocation no blind-index term of the shredded data is left', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  const other = await s.consent('demo', 'user-2')
  await s.write((sc) => putNode(sc, 'demo', customer('c1'), { name: 'Ada', age: 36 }, writeCtx(ref)))
  await s.write((sc) => putNode(sc, 'demo', customer('c2'), { name: 'Eve' }, writeCtx(other)))
  t.equal(s.store.index.getKeysCount(), 3)
  const operations = operationTable(s.webhookKey)
  // As the actor runs it: the operation table removes the consent's search terms before revoking.
  await s.write((sc) => runOperation(operations, sc, { op: 'revokeConsent', tenant: 'demo', ref, caller: TENANT }))
  const eve = s.blind.term('demo', 'name', 'Eve')
  t.same([...s.store.index.getKeys()].map((k) => (k as string[])[4]), [eve], 'only the other consent\'s term is left: whoever holds the data directory and the master key cannot test guesses')
  t.same([...s.store.owned.getKeys()].length, 2, 'the owner index still lists both nodes (they exist, locked)')
})

t.test('format 3 migration builds the owner index from the nodes', async (t) => {
  const s = tempShard(t)
  const ref = await s.consent('demo')
  await s.write((sc) => {
    putNode(sc, 'demo', customer('c1'), { name: 'Ada' }, writeCtx(ref))
    putNode(sc, 'demo', product('p1'), { title: 'Lamp' }, writeCtx(ref))
  })
  const before = [...s.store.owned.getKeys()]
  t.equal(before.length, 2)
  await s.write(() => { for (const k of before) s.store.owned.removeSync(k) })
  migrateShard(s.store, 2, 3)
  t.same([...s.store.owned.getKeys()], before, 'rebuilt as the writes made it')
  migrateShard(s.store, 2, 3)
  t.same([...s.store.owned.getKeys()], before, 'and idempotent')
})
