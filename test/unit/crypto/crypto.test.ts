// The at-rest crypto of the shard actors: sealing, the key file, data keys
// and the blind index.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BlindIndex } from '../../../workers/crypto/blind-index'
import { DataKeys } from '../../../workers/crypto/data-keys'
import { KeyFile, SLOT_BYTES } from '../../../workers/crypto/key-file'
import { matchesFingerprint, open, seal, sealedFingerprint } from '../../../workers/crypto/seal'

t.test('seal/open: round trip, fresh nonce, identity bound, tampering detected', async (t) => {
  const key = randomBytes(32)
  const a = seal(key, '{"name":"Ann"}', 'node-1')
  const b = seal(key, '{"name":"Ann"}', 'node-1')
  t.not(a.toString('hex'), b.toString('hex'), 'a fresh nonce per seal')
  t.equal(open(key, a, 'node-1')?.toString(), '{"name":"Ann"}')
  t.equal(open(key, a, 'node-2'), undefined, 'moved to another element, it does not open')
  t.equal(open(randomBytes(32), a, 'node-1'), undefined, 'another key does not open it')
  for (const i of [0, 12, a.length - 1]) {
    const c = Buffer.from(a)
    c[i] = c[i]! ^ 1
    t.equal(open(key, c, 'node-1'), undefined, `a flipped byte at ${i} is detected`)
  }
  t.equal(open(key, a.subarray(0, 10), 'node-1'), undefined, 'too short')
  t.notOk(a.includes(Buffer.from('Ann')), 'no plaintext in the sealed bytes')
})

t.test('sealed fingerprint: the same for the same sealed bytes, different for another sealing or length', async (t) => {
  const key = randomBytes(32)
  const a = seal(key, '{"name":"Ada"}', 'id')
  const b = seal(key, '{"name":"Ada"}', 'id')
  t.equal(sealedFingerprint(a), sealedFingerprint(Uint8Array.from(a)), 'a copy has the same fingerprint')
  t.not(sealedFingerprint(a), sealedFingerprint(b), 'a fresh nonce gives another fingerprint')
  const longer = Buffer.concat([a.subarray(0, 12), Buffer.from([0]), a.subarray(12)])
  t.not(sealedFingerprint(a), sealedFingerprint(longer), 'the length is part of it')
  const backing = Buffer.concat([Buffer.alloc(5), a])
  const viewed = new Uint8Array(backing.buffer, backing.byteOffset + 5, a.length)
  t.equal(sealedFingerprint(viewed), sealedFingerprint(a), 'a view at an offset reads its own bytes')
})

t.test('matchesFingerprint agrees with comparing sealedFingerprint strings', async (t) => {
  const key = randomBytes(32)
  const sealed = [0, 1, 9, 10, 99, 100, 999, 1000, 12_345].map((n) => seal(key, 'x'.repeat(n), 'id'))
  let disagreements = 0
  for (const a of sealed) {
    for (const b of sealed) if (matchesFingerprint(sealedFingerprint(a), b) !== (sealedFingerprint(a) === sealedFingerprint(b))) disagreements++
    const flipped = Buffer.from(a)
    flipped[flipped.length - 1]! ^= 1
    t.notOk(matchesFingerprint(sealedFingerprint(a), flipped), 'another tag')
    const renonced = Buffer.from(a)
    renonced[0]! ^= 1
    t.notOk(matchesFingerprint(sealedFingerprint(a), renonced), 'another nonce')
  }
  t.equal(disagreements, 0)
  t.ok(sealed.every((a) => matchesFingerprint(sealedFingerprint(a), Uint8Array.from(a))), 'a copy matches')
  for (const bad of ['', ':', 'x'.repeat(40), `0${sealedFingerprint(sealed[0]!)}`]) t.notOk(matchesFingerprint(bad, sealed[0]!), `not ${JSON.stringify(bad.slice(0, 8))}...`)
})

t.test('key file: slots are written, read, and destroyed by zeroing in place', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keyfile-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'keys.bin')
  const file = new KeyFile(path)
  const w0 = randomBytes(60)
  const w3 = randomBytes(60)
  file.write(0, w0)
  file.write(3, w3)
  t.same(file.read(0), w0)
  t.same(file.read(3), w3)
  t.equal(file.read(1), undefined, 'a slot never written reads as none')
  t.equal(file.read(9), undefined, 'past the end reads as none')
  file.destroy(0)
  t.equal(file.read(0), undefined)
  const bytes = readFileSync(path)
  t.equal(bytes.length, 4 * SLOT_BYTES, 'destroying does not move other slots')
  t.notOk(bytes.includes(w0), 'the destroyed key is not in the file')
  t.ok(bytes.includes(w3))
  t.throws(() => file.write(1, randomBytes(10)))
  file.close()
  const reopened = new KeyFile(path)
  t.same(reopened.read(3), w3, 'survives reopening')
  reopened.close()
})

t.test('data keys: created wrapped by the master key, cached, destroyed everywhere', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'datakeys-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const master = randomBytes(32)
  const file = new KeyFile(join(dir, 'keys.bin'))
  const keys = new DataKeys(file, master)
  keys.create(0)
  const k0 = Buffer.from(keys.get(0)!)
  t.equal(k0.length, 32)
  t.notOk(readFileSync(join(dir, 'keys.bin')).includes(k0), 'only the wrapped form is on disk')
  const fresh = new DataKeys(file, master)
  t.same(fresh.get(0), k0, 'unwrapped again from the file with the master key')
  t.equal(new DataKeys(file, randomBytes(32)).get(0), undefined, 'a wrong master key cannot unwrap it')
  const cached = keys.get(0)!
  keys.destroy(0)
  t.equal(keys.get(0), undefined)
  t.same(cached, Buffer.alloc(32), 'the cached copy is zeroed')
  t.equal(new DataKeys(file, master).get(0), undefined, 'gone from the file')
  file.close()
})

t.test('blind index: keyed per tenant, deterministic, no plaintext', async (t) => {
  const master = randomBytes(32)
  const idx = new BlindIndex(master)
  const a = idx.term('demo', 'name', 'John Smith')
  t.equal(a, idx.term('demo', 'name', 'John Smith'))
  t.not(a, idx.term('acme', 'name', 'John Smith'), 'another tenant, another term')
  t.not(a, idx.term('demo', 'alias', 'John Smith'), 'another property, another term')
  t.not(idx.term('demo', 'age', 42), idx.term('demo', 'age', '42'), 'a number and a string differ')
  t.not(a, new BlindIndex(randomBytes(32)).term('demo', 'name', 'John Smith'), 'another master key, another term')
  t.notMatch(a, /John/)
})

t.test('DataKeys.opens checks a slot without keeping its key', async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const { randomBytes } = await import('node:crypto')
  const { KeyFile } = await import('../../../workers/crypto/key-file')
  const { DataKeys } = await import('../../../workers/crypto/data-keys')
  const dir = mkdtempSync(join(tmpdir(), 'data-keys-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const master = randomBytes(32)
  const file = new KeyFile(join(dir, 'keys.bin'))
  t.teardown(() => file.close())
  new DataKeys(file, master).create(0)
  const fresh = new DataKeys(file, master)
  t.ok(fresh.opens(0), 'a written slot opens')
  t.notOk(fresh.opens(1), 'a slot never written does not')
  t.notOk(new DataKeys(file, randomBytes(32)).opens(0), 'nor one under another master key')
  t.equal((fresh as unknown as { cache: Map<number, Buffer> }).cache.size, 0, 'nothing is kept')
  fresh.destroy(0)
  t.notOk(fresh.opens(0), 'a destroyed slot does not')
})
