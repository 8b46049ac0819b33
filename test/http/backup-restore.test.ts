// Backup and restore that keep crypto-shredding (docs/design/data-protection.md,
// *Backup and restore*): a backup taken by the command while the server takes
// writes holds every write acknowledged before it began; a consent revoked
// after the backup stays revoked in the restored server (the shred log is
// applied first) and its wrapped key is in no file of the restored copy; a
// restored copy without the shred log is refused with one line.
import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { shardOf } from '../../src/shards/tenant-hash'
import { SLOT_BYTES, WRAPPED_BYTES } from '../../workers/crypto/key-file'
import { Graph, call, createConsent, type Answer } from '../helpers/client'
import { OAUTH_BOOTSTRAP } from '../helpers/oauth'
import { ROOT, getToken, removeDir, startServer, tempDir, type Server } from '../helpers/server'
import { filesUnder } from '../helpers/files'
import { sleep, until } from '../../bench/wait'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

const run = promisify(execFile)
const BACKUP = join(ROOT, 'dist', 'src', 'backup.js')
const SHARDS = 4
const ADMIN = { ADMIN_CLIENT_ID: 'platform-admin', ADMIN_CLIENT_SECRET: 'admin-secret' }

/** The slots of a key file that hold a key. */
function liveSlots(keyFile: string): Map<number, Buffer> {
  const bytes = readFileSync(keyFile)
  const slots = new Map<number, Buffer>()
  for (let s = 0; (s + 1) * SLOT_BYTES <= bytes.length; s++) {
    const wrapped = bytes.subarray(s * SLOT_BYTES, s * SLOT_BYTES + WRAPPED_BYTES)
    if (!wrapped.every((b) => b === 0)) slots.set(s, Buffer.from(wrapped))
  }
  return slots
}

/** A server on `dir`/data (or on `data`), with the master key and shred log of `secrets`. */
function start(dir: string, secrets: string, data?: string, shredLog?: string): Promise<Server> {
  return startServer({
    dataDir: dir,
    args: [
      '--bootstrap', OAUTH_BOOTSTRAP, '--shards', String(SHARDS), '--master-key-file', join(secrets, 'master.key'),
      ...(data === undefined ? [] : ['--data-dir', data]), ...(shredLog === undefined ? [] : ['--shred-log', shredLog]),
    ],
  })
}

t.test('an online backup restores every acknowledged write, and revocations after it stay revoked', async (t) => {
  const dir = tempDir('backup-src-')
  const secrets = join(dir, 'secrets')
  const copies = tempDir('backup-copy-')
  t.teardown(() => { removeDir(dir); removeDir(copies) })
  const server = await start(dir, secrets)
  const token = await getToken(server.url)
  const keep = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'keeps'))
  const keyFile = join(dir, 'data', 'shards', String(shardOf('demo', SHARDS)), 'keys.bin')
  const slotsBefore = liveSlots(keyFile)
  const doomedRef = await createConsent(server.url, 'demo', token, 'forgets')
  const doomedSlots = [...liveSlots(keyFile)].filter(([s]) => !slotsBefore.has(s))
  t.equal(doomedSlots.length, 1, 'the revoked-to-be consent has one key slot')
  const [doomedSlot, doomedKey] = doomedSlots[0]!
  const doomed = new Graph(server.url, 'demo', token, doomedRef)
  t.equal((await doomed.put('nodes/core/customer/forget-me', { name: 'Forgettable Person' })).status, 204)

  // Writes keep coming while the backup runs; each records when it was acknowledged.
  const acked: { id: string; at: number }[] = []
  let writing = true
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; writing; i++) {
      const id = `w${w}-${i}`
      const res = await keep.put(`nodes/core/customer/${id}`, { name: `Person ${id}` })
      if (res.status === 204) acked.push({ id, at: Date.now() })
    }
  })
  await sleep(300)
  const backupDir = join(copies, 'b1')
  const began = Date.now()
  const out = await run(process.execPath, [BACKUP, '--to', backupDir, '--data-dir', join(dir, 'data')], { env: { ...process.env, ...ADMIN } })
  t.match(out.stdout, /^backup .*b1: 4 shards and the auth store, taken /, 'the command reports the backup')
  await sleep(200)
  writing = false
  await Promise.all(writers)
  const before = acked.filter((a) => a.at < began)
  t.ok(before.length > 10, `${before.length} writes were acknowledged before the backup began`)
  t.ok(acked.length > before.length, 'and more while it ran')
  const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as { restoredCopy?: boolean }
  t.equal(manifest.restoredCopy, true, 'the copy marks itself a restored copy')
  t.ok(liveSlots(join(backupDir, 'shards', String(shardOf('demo', SHARDS)), 'keys.bin')).get(doomedSlot)?.equals(doomedKey), 'the backup holds the consent key it was taken with')

  // Revoked after the backup: the shred log must take the key from the restored copy too.
  t.equal((await doomed.delete(`consents/${doomedRef}`)).status, 204, 'revoked after the backup')
  const shredLog = join(secrets, 'shred.log')
  t.match(readFileSync(shredLog, 'utf8'), new RegExp(`"slot":${doomedSlot}`), 'the revocation is in the shred log')
  t.notMatch(readFileSync(shredLog, 'utf8'), doomedRef, 'which names no consent reference')
  await server.stop()

  // Without the shred log, a restored copy is refused.
  const unlogged = join(copies, 'b1-unlogged')
  cpSync(backupDir, unlogged, { recursive: true })
  let refusal = ''
  try {
    const s = await start(dir, secrets, unlogged, join(copies, 'no-such-shred.log'))
    await s.stop()
  } catch (err) {
    refusal = (err as Error).message
  }
  const errors = refusal.split('\n').filter((l) => l.startsWith('error: '))
  t.equal(errors.length, 1, 'a start on a restored copy without the shred log is refused with one line')
  t.match(errors[0] ?? '', /is a restored backup .* the shred log .*no-such-shred\.log is missing; start it with the shred log/)

  const restored = await start(dir, secrets, backupDir)
  t.teardown(() => restored.stop())
  const token2 = await getToken(restored.url)
  const keep2 = new Graph(restored.url, 'demo', token2, keep.consent)
  const missing: string[] = []
  for (const a of before) if ((await keep2.get(`nodes/core/customer/${a.id}`)).status !== 200) missing.push(a.id)
  t.same(missing, [], 'every write acknowledged before the backup began is in the restored server')
  t.equal((await keep2.get(`nodes/core/customer/${before[0]!.id}`)).json<{ name: string }>().name, `Person ${before[0]!.id}`)
  const locked = await new Graph(restored.url, 'demo', token2, doomedRef).get('nodes/core/customer/forget-me')
  t.equal(locked.status, 403, 'the data of the consent revoked after the backup stays locked')
  t.equal(locked.json<{ type: string }>().type, 'consent_revoked')
  const consent = await new Graph(restored.url, 'demo', token2).get(`consents/${doomedRef}`)
  t.equal(consent.json<{ status: string }>().status, 'revoked', 'and its record says revoked, as its slot does')
  t.same(filesUnder(backupDir).filter((f) => readFileSync(f).includes(doomedKey)), [], 'its wrapped key is in no file of the restored copy')
  t.equal((await keep2.put('nodes/core/customer/after-restore', { name: 'New' })).status, 204, 'the restored server takes writes')
  const rewritten = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as { restoredCopy?: boolean }
  t.equal(rewritten.restoredCopy, undefined, 'once restored, the copy is an installation of its own')
  t.ok(existsSync(shredLog))
  // The restore is said in the JSON log, like everything on stderr.
  await until('the restore in the log', () => restored.errors().includes('is a restored backup'))
  const lines = restored.errors().split('\n').filter((l) => l !== '')
  t.same(lines.filter((l) => !/^\{.*\}$/.test(l)), [], 'every line on stderr is JSON')
  const said = lines.map((l) => JSON.parse(l) as { level: number; msg: string; dataDir?: string }).find((l) => l.msg.startsWith('restored: '))
  t.match(said, { level: 30, dataDir: backupDir, msg: /is a restored backup, the shred log .* applied/ })
})

t.test('a stopped server is backed up from its files', async (t) => {
  const dir = tempDir('backup-stopped-')
  const copies = tempDir('backup-copy-')
  t.teardown(() => { removeDir(dir); removeDir(copies) })
  const secrets = join(dir, 'secrets')
  const server = await start(dir, secrets)
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'offline'))
  t.equal((await g.put('nodes/core/customer/o1', { name: 'Offline' })).status, 204)
  await server.stop()
  const to = join(copies, 'b')
  await run(process.execPath, [BACKUP, '--to', to, '--data-dir', join(dir, 'data')])
  const notEmpty = await run(process.execPath, [BACKUP, '--to', to, '--data-dir', join(dir, 'data')]).then(() => '', (err: Error & { stderr: string }) => err.stderr)
  t.match(notEmpty, /^error: the backup directory .* is not empty; name a new one\n$/, 'a backup never writes over another')
  const restored = await start(dir, secrets, to)
  t.teardown(() => restored.stop())
  const g2 = new Graph(restored.url, 'demo', await getToken(restored.url), g.consent)
  t.equal((await g2.get('nodes/core/customer/o1')).json<{ name: string }>().name, 'Offline', 'the copy restores')
})

t.test('a server that did not stop cleanly is not copied from its files until a start replays its journal', async (t) => {
  const dir = tempDir('backup-unclean-')
  const copies = tempDir('backup-copy-')
  t.teardown(() => { removeDir(dir); removeDir(copies) })
  const secrets = join(dir, 'secrets')
  let server = await start(dir, secrets)
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'unclean'))
  t.equal((await g.put('nodes/core/customer/u1', { name: 'Unclean' })).status, 204)
  await server.kill()
  const to = join(copies, 'b')
  const refused = await run(process.execPath, [BACKUP, '--to', to, '--data-dir', join(dir, 'data')]).then(() => '', (err: Error & { stderr: string }) => err.stderr)
  t.match(refused, /^error: shard \d+ was not stopped cleanly .*start the server once, stop it, then back up\n$/, 'refused with one line that says what to do')
  t.notOk(existsSync(join(to, 'manifest.json')), 'no copy was made')
  server = await start(dir, secrets)
  await server.stop()
  await run(process.execPath, [BACKUP, '--to', to, '--data-dir', join(dir, 'data')])
  const restored = await start(dir, secrets, to)
  t.teardown(() => restored.stop())
  const g2 = new Graph(restored.url, 'demo', await getToken(restored.url), g.consent)
  t.equal((await g2.get('nodes/core/customer/u1')).json<{ name: string }>().name, 'Unclean', 'after a clean stop the copy holds the write')
})

t.test('POST /oauth2/v1/admin/backups: platform.admin only, into a new absolute directory', async (t) => {
  const dir = tempDir('backup-endpoint-')
  const copies = tempDir('backup-copy-')
  t.teardown(() => { removeDir(dir); removeDir(copies) })
  const server = await start(dir, join(dir, 'secrets'))
  t.teardown(() => server.stop())
  const admin = await getToken(server.url, 'platform.admin', 'platform-admin', 'admin-secret')
  const post = (token: string, body: unknown): Promise<Answer> => call('POST', `${server.url}/oauth2/v1/admin/backups`,
    { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, JSON.stringify(body))
  t.equal((await post(await getToken(server.url), { to: join(copies, 'x') })).status, 403, 'a graph client may not')
  const relative = await post(admin, { to: 'relative/dir' })
  t.equal(relative.status, 400)
  t.match(relative.json<{ message: string }>().message, 'must be an absolute path')
  const made = await post(admin, { to: join(copies, 'b') })
  t.equal(made.status, 201)
  t.match(made.json(), { to: join(copies, 'b'), shards: SHARDS, taken: String })
  t.ok(existsSync(join(copies, 'b', 'manifest.json')) && existsSync(join(copies, 'b', 'auth', 'data.mdb')))
  for (let n = 0; n < SHARDS; n++) t.ok(existsSync(join(copies, 'b', 'shards', String(n), 'keys.bin')), `shard ${n} with its key file`)
  t.equal((await post(admin, { to: join(copies, 'b') })).status, 400, 'never over another backup')
})
