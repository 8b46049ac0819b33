// Encryption at rest, checked on the files themselves: no plaintext property
// value on disk; a revoked consent's data key (wrapped or raw) is nowhere in
// the data directory afterwards; a flipped ciphertext byte locks the element
// instead of crashing; a bad master key stops the start with a clear error.
import t from 'tap'
import { chmodSync, copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { open as openLmdb } from 'lmdb'
import { randomBytes } from 'node:crypto'
import { shardOf } from '../../src/shards/tenant-hash'
import { open as unseal } from '../../workers/crypto/seal'
import { SLOT_BYTES, WRAPPED_BYTES } from '../../workers/crypto/key-file'
import { VALUE_ENCODING } from '../../workers/store/shard-store'
import { Graph, createConsent } from '../helpers/client'
import { filesUnder, holders } from '../helpers/files'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

type Body = Record<string, unknown>
const SHARDS = 4

const keyFileOf = (dir: string, tenant: string): string => join(dir, 'data', 'shards', String(shardOf(tenant, SHARDS)), 'keys.bin')
const masterKeyOf = (dir: string): Buffer => Buffer.from(readFileSync(join(dir, 'secrets', 'master.key'), 'utf8').trim(), 'base64')

t.test('no plaintext property value reaches the data files', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir })
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'subject-x'))
  const markers = ['Zebediah Quuxworth', 'zq-marker@example.invalid', 'relation-marker-93561', 'product-marker-55102']
  t.equal((await g.put('nodes/core/customer/m1', { name: markers[0], email: markers[1], age: 77 })).status, 204)
  t.equal((await g.put('relations/core/customer/m1/core/product/m2/core/viewed/r', { note: markers[2] })).status, 204)
  t.equal((await g.put('nodes/core/product/m2', { title: markers[3] })).status, 204)
  t.equal((await g.get('nodes/core/customer/m1')).json<Body>().name, markers[0], 'readable through the API')
  await server.stop()
  t.ok(filesUnder(join(dir, 'data')).length > 4)
  for (const m of markers) t.same(holders(join(dir, 'data'), Buffer.from(m)), [], `"${m}" is in no file`)
})

t.test('a revoked data key is gone from every file, wrapped and unwrapped', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir })
  const token = await getToken(server.url)
  // Find the new consent's key slot by comparing the key file before and after.
  await createConsent(server.url, 'demo', token, 'warm-up')
  const before = readFileSync(keyFileOf(dir, 'demo'))
  const ref = await createConsent(server.url, 'demo', token, 'to-be-forgotten')
  const after = readFileSync(keyFileOf(dir, 'demo'))
  let slot = -1
  for (let s = 0; s * SLOT_BYTES < after.length; s++) {
    const cur = after.subarray(s * SLOT_BYTES, s * SLOT_BYTES + WRAPPED_BYTES)
    const old = before.subarray(s * SLOT_BYTES, s * SLOT_BYTES + WRAPPED_BYTES)
    if (!cur.equals(old.length === WRAPPED_BYTES ? old : Buffer.alloc(WRAPPED_BYTES))) slot = s
  }
  t.ok(slot >= 0, `the consent's key is in slot ${slot}`)
  const wrapped = Buffer.from(after.subarray(slot * SLOT_BYTES, slot * SLOT_BYTES + WRAPPED_BYTES))
  const raw = unseal(masterKeyOf(dir), wrapped, `data-key-slot:${slot}`)
  t.ok(raw !== undefined && raw.length === 32, 'the slot holds a data key wrapped by the master key')

  const g = new Graph(server.url, 'demo', token, ref)
  for (let i = 0; i < 20; i++) await g.put(`nodes/core/customer/f${i}`, { name: `Forget Me ${i}` })
  // The consent's creation is journaled with its wrapped key, until a checkpoint drops the segment.
  const shardDir = join(dir, 'data', 'shards', String(shardOf('demo', SHARDS)))
  const holding = holders(join(dir, 'data'), wrapped)
  t.ok(holding.includes(join(shardDir, 'keys.bin')), 'before: in its slot')
  t.same(holding.filter((f) => !f.startsWith(join(shardDir, 'journal'))), [join(shardDir, 'keys.bin')], 'and nowhere else but the shard\'s journal')
  t.equal((await g.delete(`consents/${ref}`)).status, 204, 'revoked')
  t.same(holders(dir, wrapped), [], 'once the 204 is out, the wrapped key is in no file (no journal segment kept it), the server still running')
  await server.stop()

  // Someone now copies the data directory and the master key: the key is not there to find.
  t.same(holders(dir, wrapped), [], 'the wrapped key is in no file')
  t.same(holders(dir, raw!), [], 'the raw key is in no file')
  const again = await startServer({ dataDir: dir })
  t.teardown(() => again.stop())
  const g2 = new Graph(again.url, 'demo', await getToken(again.url), ref)
  t.equal((await g2.get('nodes/core/customer/f1')).status, 403, 'the data stays unreadable after a restart')
})

t.test('a flipped ciphertext byte makes the element locked, not a crash', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  let server = await startServer({ dataDir: dir })
  let token = await getToken(server.url)
  const ref = await createConsent(server.url, 'demo', token, 'tamper')
  let g = new Graph(server.url, 'demo', token, ref)
  await g.put('nodes/core/customer/t1', { name: 'Tampered' })
  await g.put('relations/core/customer/t1/core/customer/t2/core/knows/k', { since: 1 })
  await server.stop()

  const env = openLmdb({ path: join(dir, 'data', 'shards', String(shardOf('demo', SHARDS))), maxDbs: 8 })
  const nodes = env.openDB<{ s: Uint8Array }, (string | number)[]>('nodes', VALUE_ENCODING)
  const key = ['demo', 'core', 'customer', 't1']
  const rec = nodes.get(key)!
  const s = Buffer.from(rec.s)
  s[s.length - 20] = s[s.length - 20]! ^ 0x01
  await nodes.put(key, { ...rec, s })
  await env.close()

  server = await startServer({ dataDir: dir })
  t.teardown(() => server.stop())
  token = await getToken(server.url)
  g = new Graph(server.url, 'demo', token, ref)
  const res = await g.get('nodes/core/customer/t1')
  t.equal(res.status, 200)
  t.same(res.json(), { LOCKED: true })
  const chunks = (await g.get('neighbours/core/customer/t2')).json<Body[]>()
  t.same([chunks[1]!.id, chunks[1]!.locked], ['t1', true])
  t.equal((await g.get('nodes/core/customer/t2')).status, 200, 'the server is alive and other data reads')
})

t.test('a key file anyone else may read, or a wrong master key, stops the start with a clear error', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir })
  await server.stop()
  const keyFile = join(dir, 'secrets', 'master.key')
  t.equal(statSync(keyFile).mode & 0o777, 0o600, 'created with mode 0600')
  chmodSync(keyFile, 0o644)
  await t.rejects(startServer({ dataDir: dir }), /chmod 600/)
  chmodSync(keyFile, 0o600)

  const other = join(dir, 'other.key')
  writeFileSync(other, randomBytes(32).toString('base64') + '\n', { mode: 0o600 })
  await t.rejects(startServer({ dataDir: dir, args: ['--master-key-file', other] }), /master key does not belong to the data directory/)

  const short = join(dir, 'short.key')
  writeFileSync(short, 'abc\n', { mode: 0o600 })
  await t.rejects(startServer({ dataDir: dir, args: ['--master-key-file', short] }), /32-byte key/)

  copyFileSync(keyFile, join(dir, 'copy.key'))
  chmodSync(join(dir, 'copy.key'), 0o600)
  const ok = await startServer({ dataDir: dir, args: ['--master-key-file', join(dir, 'copy.key')] })
  await ok.stop()
  t.pass('the right key, in any file, starts')
})
