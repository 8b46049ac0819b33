// A data subject's erasure checked on the files themselves: a subject with
// 100 consents is erased (DELETE subject) within its goal, and afterwards no
// file of the data directory holds any of their data keys, wrapped or raw,
// nor a plaintext value they stored; another subject's key stays.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { shardOf } from '../../src/shards/tenant-hash'
import { open as unseal } from '../../workers/crypto/seal'
import { SLOT_BYTES, WRAPPED_BYTES } from '../../workers/crypto/key-file'
import { Graph, call, createConsent, pool } from '../helpers/client'
import { contentsUnder } from '../helpers/files'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'

const SHARDS = 4
const CONSENTS = 100
/** The goal for an erasure of 100 consents. */
const GOAL_MS = 5000

const keyFileOf = (dir: string): string => join(dir, 'data', 'shards', String(shardOf('demo', SHARDS)), 'keys.bin')
const masterKeyOf = (dir: string): Buffer => Buffer.from(readFileSync(join(dir, 'secrets', 'master.key'), 'utf8').trim(), 'base64')
const slotOf = (file: Buffer, slot: number): Buffer => Buffer.from(file.subarray(slot * SLOT_BYTES, slot * SLOT_BYTES + WRAPPED_BYTES))

/** The needles found in any file under `dir`, read once. */
function found(dir: string, needles: readonly Buffer[]): number[] {
  const files = contentsUnder(dir)
  return needles.flatMap((n, i) => (files.some((f) => f.bytes.includes(n)) ? [i] : []))
}

t.test('an erased subject leaves no key and no plaintext on disk', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir })
  t.teardown(() => server.stop())
  const token = await getToken(server.url)
  // Another subject's consent and the tenant's own key exist before, so the slots that change next are the subject's.
  const kept = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'stays'))
  t.equal((await kept.put('nodes/core/product/erase-p', { title: 'Product' })).status, 204)
  t.equal((await kept.put('nodes/core/customer/stays', { name: 'Still Here' })).status, 204)
  const before = readFileSync(keyFileOf(dir))

  const refs = await pool(CONSENTS, 8, () => createConsent(server.url, 'demo', token, 'erase-me'))
  const markers = refs.map((_, i) => `erase-marker-${i}-${'q'.repeat(8)}`)
  await pool(CONSENTS, 8, async (i) => {
    const g = new Graph(server.url, 'demo', token, refs[i])
    t.equal((await g.put(`nodes/core/customer/e${i}`, { name: markers[i] })).status, 204)
    t.equal((await g.post(`counters/core/customer/e${i}/core/product/erase-p/core/viewed/v/views`)).status, 200)
  })
  const after = readFileSync(keyFileOf(dir))
  const slots: number[] = []
  for (let s = 0; s * SLOT_BYTES < after.length; s++) {
    const old = slotOf(before, s)
    if (!slotOf(after, s).equals(old.length === WRAPPED_BYTES ? old : Buffer.alloc(WRAPPED_BYTES))) slots.push(s)
  }
  t.equal(slots.length, CONSENTS, "each consent's key is in a slot of its own")
  const wrapped = slots.map((s) => slotOf(after, s))
  const raw = slots.map((s, i) => unseal(masterKeyOf(dir), wrapped[i]!, `data-key-slot:${s}`)!)
  t.ok(raw.every((k) => k !== undefined && k.length === 32), 'each slot holds a data key wrapped by the master key')
  const staysSlot = [...Array(Math.floor(before.length / SLOT_BYTES)).keys()].filter((s) => !slotOf(before, s).equals(Buffer.alloc(WRAPPED_BYTES)))
  const staysKeys = staysSlot.map((s) => slotOf(before, s))

  const started = performance.now()
  const erased = await call('DELETE', `${server.url}/graph/v1/demo/subject?subject=erase-me`, { authorization: `Bearer ${token}` })
  const took = performance.now() - started
  t.equal(erased.status, 204)
  t.comment(`erase of ${CONSENTS} consents answered in ${took.toFixed(0)} ms`)
  t.ok(took < GOAL_MS, `answered within ${GOAL_MS} ms (${took.toFixed(0)} ms)`)
  t.same(found(dir, wrapped), [], 'once the 204 is out, no wrapped key of the subject is in any file')
  t.same(found(dir, raw), [], 'nor any raw key')
  t.same(found(dir, staysKeys), staysKeys.map((_, i) => i), "the other subject's and the tenant's keys stay")
  t.equal((await kept.get('nodes/core/customer/stays')).status, 200)
  await server.stop()

  t.same(found(dir, [...wrapped, ...raw]), [], 'after a stop, still no key of the subject in any file')
  t.same(found(join(dir, 'data'), markers.map((m) => Buffer.from(m))), [], 'and no plaintext value they stored')
  const again = await startServer({ dataDir: dir })
  t.teardown(() => again.stop())
  const g = new Graph(again.url, 'demo', await getToken(again.url), refs[0])
  t.equal((await g.get('nodes/core/customer/e0')).status, 403, 'their data stays unreadable after a restart')
})
