// The shred log (src/crypto/shred-log.ts) and the restored-copy check at
// start (src/start/data-dir.ts, src/backups/restore.ts): lines are read back by
// generation and shard, a torn last line is skipped; a restored copy needs
// the log, gets a generation of its own and applies the one it came from.
import t from 'tap'
import { appendFileSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../../../src/config/load-config'
import { appendShredLog, ensureShredLog, shreddedSlots } from '../../../src/crypto/shred-log'
import { openDataDir } from '../../../src/start/data-dir'
import { readManifest, writeManifest } from '../../../src/shards/manifest'
import { removeDir, tempDir } from '../../helpers/server'

t.test('lines are read back by generation and shard; a torn line is skipped', async (t) => {
  const dir = tempDir('shred-log-')
  t.teardown(() => removeDir(dir))
  const log = join(dir, 'secrets', 'shred.log')
  ensureShredLog(log)
  t.equal(statSync(log).mode & 0o777, 0o600, 'created owner-only')
  t.equal(readFileSync(log, 'utf8'), '', 'and empty')
  appendShredLog(log, 'g1', 0, [3, 5])
  appendShredLog(log, 'g1', 1, [3])
  appendShredLog(log, 'g2', 0, [7])
  appendShredLog(log, 'g1', 0, [])
  appendFileSync(log, '{"generation":"g1","shard":0,"sl')
  t.same([...shreddedSlots(log, 'g1', 0)], [3, 5])
  t.same([...shreddedSlots(log, 'g1', 1)], [3])
  t.same([...shreddedSlots(log, 'g2', 0)], [7])
  t.same([...shreddedSlots(log, 'g3', 0)], [])
  ensureShredLog(log)
  t.same([...shreddedSlots(log, 'g2', 0)], [7], 'ensure never truncates')
})

t.test('a restored copy needs the shred log and starts a generation of its own', async (t) => {
  const dir = tempDir('restored-')
  t.teardown(() => removeDir(dir))
  const data = join(dir, 'data')
  const key = join(dir, 'secrets', 'master.key')
  const log = join(dir, 'secrets', 'shred.log')
  const fresh = openDataDir(data, key, 2, 1, log)
  const generation = fresh.manifest.generation
  t.ok(generation !== undefined && generation.length > 10, 'a new directory gets a generation')
  t.equal(fresh.restore, undefined)
  const again = openDataDir(data, key, 2, 2, log)
  t.equal(again.manifest.generation, generation, 'which a normal start keeps')
  t.notOk(again.rewrite)

  writeManifest(data, { ...readManifest(data)!, restoredCopy: true, backupTaken: 1795453705970 })
  t.throws(() => openDataDir(data, key, 2, 3, log), new ConfigError(
    `data directory ${data} is a restored backup taken ${new Date(1795453705970).toISOString()} and the shred log ${log} is missing; start it with the shred log of the installation it was taken from (--shred-log / SHRED_LOG_FILE), so that consents revoked after the backup stay revoked`,
  ))
  ensureShredLog(log)
  const restored = openDataDir(data, key, 2, 3, log)
  t.same(restored.restore, { generation }, 'the shards apply the lines of the generation the backup came from')
  t.not(restored.manifest.generation, generation, 'and the restored installation logs under a new one')
  t.equal(restored.manifest.restoredCopy, undefined, 'its manifest, once rewritten, is no longer a restored copy')
  t.ok(restored.rewrite)
})

t.test('a shred log that cannot be created stops the start with one line', async (t) => {
  const dir = tempDir('shred-log-')
  t.teardown(() => removeDir(dir))
  const blocker = join(dir, 'file')
  appendFileSync(blocker, 'x')
  t.throws(() => ensureShredLog(join(blocker, 'shred.log')), { name: 'Error', message: /^the shred log .*file\/shred\.log cannot be created \(.*\); name a writable place with --shred-log \/ SHRED_LOG_FILE$/ })
})
