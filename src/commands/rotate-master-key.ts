// The master-key rotation command (server stopped):
//
//   node dist/src/rotate-master-key.js --data-dir ./data --master-key-file ./secrets/master.key
//     --to /srv/data-rotated --new-master-key-file ./secrets/master.key.new
//
// Copies the data directory (as backup.js does, under its lock) into --to and
// rotates the copy, never the original: every live data key wrapped again
// under the new master key, the search index rebuilt under the new blind-index
// keys (of the properties it indexes), webhook secrets and ID-token signing keys sealed again, and the
// manifest's master key check replaced. The operator then starts the server on
// the copy with the new key, and destroys the old key: from then on a backup
// taken before, and its wrapped keys of consents revoked since, no longer
// opens with any key that exists (docs/design/data-protection.md, *Backup and restore*).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { openAuthStore } from '../auth/models/auth-store'
import { ConfigError, loadToolConfig, usage, wantsHelp, type ToolConfig } from '../config/load-config'
import { loadOrCreateMasterKey, masterKeyCheck } from '../crypto/master-key'
import { describeHolder, tryLockDataDir } from '../start/data-dir-lock'
import { privateUmask } from '../start/file-modes'
import { backupStoppedDataDir } from '../backups/offline'
import { checkMasterKey, readManifest, writeManifest } from '../shards/manifest'
import { seal, unseal } from '../../workers/crypto/signing-key'

const REKEY_WORKER = join(__dirname, '..', '..', 'workers', 'rekey-shards.js')

function rekeyShards(data: { dataDir: string; shards: number; oldKey: Buffer; newKey: Buffer }): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(REKEY_WORKER, { workerData: data })
    worker.on('message', (line: string) => {
      if (line === 'done') resolve()
      else if (line.startsWith('failed: ')) reject(new ConfigError(`the rotation failed: ${line.slice(8)}; the original data directory is unchanged`))
      else console.error(line)
    })
    worker.on('error', reject)
  })
}

async function rotate(): Promise<string> {
  privateUmask()
  const config = loadToolConfig(process.argv.slice(2), process.env)
  const { backupTo, newMasterKeyFile } = config
  if (backupTo === undefined || newMasterKeyFile === undefined) {
    throw new ConfigError('name the new data directory (--to) and the new master key file (--new-master-key-file)')
  }
  const lock = await tryLockDataDir(config.dataDir, 'rotate-master-key')
  if (!('release' in lock)) throw new ConfigError(`${config.dataDir} is in use by ${describeHolder(lock)}: stop the server first; the rotation works on a copy of its files`)
  try {
    return await rotateLocked({ ...config, backupTo, newMasterKeyFile })
  } finally {
    lock.release()
  }
}

/** Under the data directory's lock: the checks, then the copy and its rotation. */
async function rotateLocked(config: ToolConfig & { backupTo: string; newMasterKeyFile: string }): Promise<string> {
  const manifest = readManifest(config.dataDir)
  if (manifest === undefined) throw new ConfigError(`${config.dataDir} holds no data directory (no manifest.json): pass the server's --data-dir`)
  if (manifest.restoredCopy === true) throw new ConfigError(`${config.dataDir} is a restored backup not started yet: start the server on it once (it applies the shred log), then rotate`)
  if (!existsSync(config.masterKeyFile)) throw new ConfigError(`master key file ${config.masterKeyFile} not found: pass the server's --master-key-file`)
  const oldKey = loadOrCreateMasterKey(config.masterKeyFile, false)
  checkMasterKey(config.dataDir, manifest, masterKeyCheck(oldKey))
  const newKey = loadOrCreateMasterKey(config.newMasterKeyFile, true)
  if (newKey.equals(oldKey)) throw new ConfigError('the new master key is the old one: name a new file with --new-master-key-file')
  const to = config.backupTo
  await backupStoppedDataDir(config.dataDir, to)
  await rekeyShards({ dataDir: to, shards: manifest.shards, oldKey, newKey })
  const auth = openAuthStore(to)
  try {
    for (const { value } of [...auth.signingKeys.getRange()]) {
      await auth.signingKeys.put(value.kid, { ...value, sealed: seal(newKey, value.kid, unseal(oldKey, value.kid, value.sealed)) })
    }
  } finally {
    await auth.env.close()
  }
  const { restoredCopy: _copy, backupTaken: _taken, ...kept } = readManifest(to)!
  writeManifest(to, { ...kept, masterKeyCheck: masterKeyCheck(newKey) })
  return to
}

if (wantsHelp(process.argv.slice(2))) {
  console.log(usage('node dist/src/rotate-master-key.js', true))
} else {
  rotate().then((to) => {
    console.log(`rotated: ${to} is the data directory under the new master key; start the server on it with --master-key-file set to the new key, then destroy the old key`)
  }, (err: unknown) => {
    console.error(err instanceof ConfigError ? `error: ${err.message}` : err)
    process.exit(1)
  })
}
