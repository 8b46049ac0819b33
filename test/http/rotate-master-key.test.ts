// Master-key rotation (src/commands/rotate-master-key.ts): a stopped server's data
// directory is copied and rotated; the server starts on the copy with the new
// key only, every consent's data opens, search finds what it found, ID-token
// signing keys open, and the old key's wrapped data keys are in no file of it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { openAuthStore } from '../../src/auth/models/auth-store'
import { shardOf } from '../../src/shards/tenant-hash'
import { unseal } from '../../workers/crypto/signing-key'
import { SLOT_BYTES, WRAPPED_BYTES } from '../../workers/crypto/key-file'
import { Graph, createConsent } from '../helpers/client'
import { ROOT, getToken, removeDir, startServer, tempDir } from '../helpers/server'

const run = promisify(execFile)
const ROTATE = join(ROOT, 'dist', 'src', 'rotate-master-key.js')

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? filesUnder(p) : [p]
  })
}

t.test('a rotated copy serves everything under the new master key only', async (t) => {
  const dir = tempDir('rotate-')
  t.teardown(() => removeDir(dir))
  const oldKey = join(dir, 'secrets', 'master.key')
  const server = await startServer({ dataDir: dir, args: ['--shards', '2'] })
  const token = await getToken(server.url)
  const ref = await createConsent(server.url, 'demo', token, 'rotated')
  const g = new Graph(server.url, 'demo', token, ref)
  t.equal((await g.put('nodes/core/customer/r1', { name: 'Rota Person', age: 41 })).status, 204)
  t.equal((await g.put('nodes/core/product/p1', { title: 'Kettle' })).status, 204)
  await server.stop()
  const keyFile = (data: string): string => join(data, 'shards', String(shardOf('demo', 2)), 'keys.bin')
  const before = readFileSync(keyFile(join(dir, 'data')))
  const wrapped: Buffer[] = []
  for (let s = 0; (s + 1) * SLOT_BYTES <= before.length; s++) wrapped.push(Buffer.from(before.subarray(s * SLOT_BYTES, s * SLOT_BYTES + WRAPPED_BYTES)))

  const to = join(dir, 'rotated')
  const newKey = join(dir, 'secrets', 'master.key.new')
  const out = await run(process.execPath, [ROTATE, '--data-dir', join(dir, 'data'), '--master-key-file', oldKey, '--to', to, '--new-master-key-file', newKey])
  t.match(out.stdout, /^rotated: .*rotated is the data directory under the new master key/)
  t.match(out.stderr, /shard \d: \d+ data keys wrapped again, \d+ nodes indexed again/)
  for (const w of wrapped.filter((b) => !b.every((x) => x === 0))) {
    t.same(filesUnder(to).filter((f) => readFileSync(f).includes(w)), [], 'no data key wrapped under the old master key is in the rotated copy')
  }

  const auth = openAuthStore(to)
  const keys = [...auth.signingKeys.getRange()].map(({ value }) => value)
  await auth.env.close()
  t.ok(keys.length > 0)
  const masterOf = (file: string): Buffer => Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')
  for (const k of keys) {
    t.ok(unseal(masterOf(newKey), k.kid, k.sealed).length > 0, `signing key ${k.kid} opens under the new key`)
    t.throws(() => unseal(masterOf(oldKey), k.kid, k.sealed), `and not under the old one`)
  }

  const refused = await startServer({ dataDir: dir, args: ['--data-dir', to, '--shards', '2'] }).then(async (s) => { await s.stop(); return '' }, (err: Error) => err.message)
  t.match(refused, /error: the master key does not belong to the data directory/, 'the old key no longer opens the copy')
  const rotated = await startServer({ dataDir: dir, args: ['--data-dir', to, '--master-key-file', newKey, '--shards', '2'] })
  t.teardown(() => rotated.stop())
  const g2 = new Graph(rotated.url, 'demo', await getToken(rotated.url), ref)
  t.match((await g2.get('nodes/core/customer/r1')).json(), { name: 'Rota Person', age: 41 }, 'the data opens under the new key')
  t.same((await g2.get('nodes/core/customer?q=name:"Rota Person"')).json<{ id: string }[]>().map((n) => n.id), ['r1'], 'search works under the new blind-index keys')
  t.same((await g2.get('nodes/core/product?q=title:"Kettle"')).json<{ id: string }[]>().map((n) => n.id), ['p1'], 'tenant-owned data too')
})
