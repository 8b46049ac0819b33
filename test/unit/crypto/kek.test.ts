// Cluster mode's KEK file and the data keys it wraps (docs/design/replication.md,
// "Crypto-shredding across hosts"): the file is read, never made; its first
// key wraps, every key unwraps; a rotation re-wraps a slot under the current
// KEK once, leaving the key itself as it was.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from '../../../src/config/load-config'
import { readKekFile } from '../../../src/crypto/kek-file'
import { DataKeys } from '../../../workers/crypto/data-keys'
import { KeyFile } from '../../../workers/crypto/key-file'

function dir(t: { teardown(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'kek-'))
  t.teardown(() => rmSync(d, { recursive: true, force: true }))
  return d
}

t.test('the KEK file: missing, readable by others or malformed is a ConfigError; lines are current first', async (t) => {
  const d = dir(t)
  const path = join(d, 'kek.key')
  t.throws(() => readKekFile(path), new ConfigError(`KEK file ${path} is missing; in cluster mode every host is given the same KEK file (--kek-file), never a new one`))
  writeFileSync(path, `${randomBytes(32).toString('base64')}\n`, { mode: 0o644 })
  t.throws(() => readKekFile(path), /has mode 644; it must be readable by its owner only/)
  const other = join(d, 'short.key')
  writeFileSync(other, `${randomBytes(16).toString('base64')}\n`, { mode: 0o600 })
  t.throws(() => readKekFile(other), /must hold one base64 32-byte key per line/)
  const [current, previous] = [randomBytes(32), randomBytes(32)]
  const two = join(d, 'two.key')
  writeFileSync(two, `${current.toString('base64')}\n\n${previous.toString('base64')}\n`, { mode: 0o600 })
  const keys = readKekFile(two)
  t.ok(keys.current.equals(current))
  t.same(keys.all.map((k) => k.toString('hex')), [current, previous].map((k) => k.toString('hex')))
})

t.test('data keys under a KEK ring: a previous KEK opens, a rotation re-wraps once, a foreign grant does not open', async (t) => {
  const d = dir(t)
  const [oldKek, newKek] = [randomBytes(32), randomBytes(32)]
  const file = new KeyFile(join(d, 'keys.bin'))
  t.teardown(() => file.close())
  new DataKeys(file, { current: oldKek, all: [oldKek] }).create(0)
  const before = file.read(0)!
  const original = new DataKeys(file, oldKek).get(0)!
  const rotating = new DataKeys(file, { current: newKek, all: [newKek, oldKek] })
  t.ok(rotating.rotating)
  t.ok(rotating.get(0)?.equals(original), 'a key wrapped by the previous KEK opens')
  t.equal(rotating.rewrapUnderCurrent(0), true, 're-wrapped')
  t.notSame(file.read(0), before, 'the slot holds another wrap')
  t.equal(rotating.rewrapUnderCurrent(0), false, 'once')
  t.equal(rotating.rewrapUnderCurrent(5), false, 'an empty slot is left alone')
  const after = new DataKeys(file, { current: newKek, all: [newKek] })
  t.notOk(after.rotating)
  t.ok(after.get(0)?.equals(original), 'the same key opens with the new KEK alone')
  t.equal(new DataKeys(file, oldKek).get(0), undefined, 'and no longer with the old one')
  t.notOk(after.opensWrapped(0, before), 'the old wrap does not open without the old KEK')
  t.ok(rotating.opensWrapped(0, before))
})
