// A write that throws inside a group commit leaves no trace and fails alone;
// a revocation is on disk before its key slot is destroyed, and start-up
// finishes one a crash interrupted.
import t from 'tap'
import { applyIsolated } from '../../../workers/store/isolated-write'
import { createConsent, finishRevocations, getConsentRecord, revokeConsent } from '../../../workers/store/consents'
import { ok, type OpResult } from '../../../workers/store/result'
import { tempShard } from '../../helpers/temp-shard'

t.test('a throwing write is rolled back alone; the others of the batch commit', async (t) => {
  const { store } = tempShard(t)
  const undone: string[] = []
  const errors = console.error
  console.error = () => undefined
  const results = await store.env.transaction(() => [
    applyIsolated(store, () => { store.counts.putSync(['a'], 1); return ok(204) }, () => undone.push('a'), 'a'),
    applyIsolated(store, () => {
      store.counts.putSync(['b'], 2)
      throw new RangeError('Invalid time value')
    }, () => undone.push('b'), 'b'),
    applyIsolated(store, () => { store.counts.putSync(['c'], 3); return ok(201) }, () => undone.push('c'), 'c'),
  ]).finally(() => { console.error = errors })
  await store.env.flushed
  t.same(results.map((r: OpResult) => r.kind === 'ok' ? r.status : r.type), [204, 'internal_error', 201])
  t.same(undone, ['b'])
  t.equal(store.counts.get(['a']), 1)
  t.equal(store.counts.get(['b']), undefined, 'the failed write left nothing')
  t.equal(store.counts.get(['c']), 3)
})

t.test('a full disk inside a write answers 507, not 500', async (t) => {
  const { store } = tempShard(t)
  const errors = console.error
  console.error = () => undefined
  const [r] = await store.env.transaction(() => [
    applyIsolated(store, () => { throw Object.assign(new Error('No space left on device'), { code: 'ENOSPC' }) }, () => undefined, 'x'),
  ]).finally(() => { console.error = errors })
  t.same(r, { kind: 'error', type: 'insufficient_storage', message: 'the disk of the data directory is full; the write was not applied' })
})

t.test('revoking commits the record first and names the slot to destroy after the commit', async (t) => {
  const { store } = tempShard(t)
  const created = await store.env.transaction(() => createConsent(store, 'demo', 'user-1', 1))
  t.equal(created.kind, 'ok')
  const ref = (JSON.parse((created as { body: string }).body) as { consentReference: string }).consentReference
  const slot = getConsentRecord(store, 'demo', ref)!.slot
  t.ok(store.keyFile.read(slot), 'the slot holds a key')
  const shred: number[] = []
  await store.env.transaction(() => revokeConsent(store, 'demo', ref, { kind: 'tenant' }, shred))
  await store.env.flushed
  t.same(shred, [slot])
  // A crash here: the record says revoked, the slot still holds the key.
  store.cache.consents.clear()
  t.equal(getConsentRecord(store, 'demo', ref)!.status, 'revoked')
  t.ok(store.keyFile.read(slot), 'not destroyed before the commit is durable')
  t.equal(finishRevocations(store), 1, 'start-up finishes the interrupted revocation')
  t.equal(store.keyFile.read(slot), undefined)
  t.equal(finishRevocations(store), 0, 'and only once')
})
