// The backup command:
//
//   node dist/src/backup.js --to /new/dir [--data-dir ./data]
//     [--server-url URL] [--admin-client-id ID] [ADMIN_CLIENT_SECRET=...]
//
// While a server runs on the data directory (its lock names where it
// listens) or when --server-url is given, the backup is taken by that server
// (POST /oauth2/v1/admin/backups with a platform.admin client), online, while
// it serves. When the server is stopped the files are copied directly, under
// the data directory's lock so that no server starts meanwhile. Either way
// the copy's manifest marks it a restored copy: a server started on it
// applies the shred log first (docs/design/data-protection.md, *Backup and restore*).
import { ConfigError, loadToolConfig, usage, wantsHelp, type ToolConfig } from '../config/load-config'
import { adminAuthorization, callServer } from './admin-client'
import { describeHolder, tryLockDataDir } from '../start/data-dir-lock'
import { privateUmask } from '../start/file-modes'
import { backupStoppedDataDir } from '../backups/offline'
import type { BackupResult } from '../backups/take-backup'

async function throughServer(config: ToolConfig, serverUrl: string, running: string, to: string): Promise<BackupResult> {
  const auth = await adminAuthorization(config, serverUrl, running)
  return await callServer(`${serverUrl}/oauth2/v1/admin/backups`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ to }),
  }) as BackupResult
}

async function backup(): Promise<BackupResult> {
  const argv = process.argv.slice(2)
  privateUmask()
  const config = loadToolConfig(argv, process.env)
  const to = config.backupTo
  if (to === undefined) throw new ConfigError('name the new backup directory with --to DIR (or BACKUP_TO)')
  if (config.serverUrl !== undefined) return await throughServer(config, config.serverUrl, `the server at ${config.serverUrl} runs`, to)
  const lock = await tryLockDataDir(config.dataDir, 'backup')
  if (!('release' in lock)) {
    if (lock.url === undefined) throw new ConfigError(`${config.dataDir} is in use by ${describeHolder(lock)}: try again once it listens or is done`)
    return await throughServer(config, lock.url, `${config.dataDir} is in use by ${describeHolder(lock)}`, to)
  }
  try {
    return await backupStoppedDataDir(config.dataDir, to)
  } finally {
    lock.release()
  }
}

if (wantsHelp(process.argv.slice(2))) {
  console.log(usage('node dist/src/backup.js', true))
} else {
  backup().then((r) => console.log(`backup ${r.to}: ${r.shards} shards and the auth store, taken ${r.taken} (${r.tookMs} ms)`), (err: unknown) => {
    console.error(err instanceof ConfigError ? `error: ${err.message}` : err)
    process.exit(1)
  })
}
