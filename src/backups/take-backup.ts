// A backup: a consistent copy of every shard (each by its actor, while it
// serves: workers/crypto/backup-copy.ts) and of the auth store into a new
// directory, whose manifest is written last and marks it a restored copy:
// a start on it applies the shred log first (src/backups/restore.ts). A
// backup that stopped half-way has no manifest, and a start refuses it.
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import type { RootDatabase } from 'lmdb'
import { ConfigError } from '../config/load-config'
import { syncPath } from '../crypto/synced-files'
import { writeManifest, type Manifest } from '../shards/manifest'
import { copyEnvironment } from '../../workers/crypto/backup-copy'
import { lastBackupSeconds } from '../telemetry/metrics'

export interface BackupSource {
  /** The running installation's manifest (its generation names the shred-log lines a restore applies). */
  manifest: Manifest
  /** The auth store's environment. */
  authEnv: RootDatabase
  /** Copies one shard into `<to>/shards/<n>`: its environment, then its key file. */
  backupShards(to: string): Promise<void>
}

export interface BackupResult {
  to: string
  shards: number
  /** ISO time the backup began: every write acknowledged before it is in the copy. */
  taken: string
  tookMs: number
}

/** The target: an absolute path that does not exist yet or is an empty directory. */
function prepareTarget(to: string): void {
  if (!isAbsolute(to)) throw new ConfigError(`the backup directory must be an absolute path, got "${to}"`)
  if (existsSync(to) && readdirSync(to).length > 0) throw new ConfigError(`the backup directory ${to} is not empty; name a new one`)
  mkdirSync(to, { recursive: true, mode: 0o700 })
}

export async function takeBackup(source: BackupSource, to: string): Promise<BackupResult> {
  prepareTarget(to)
  const started = Date.now()
  await source.backupShards(to)
  await copyEnvironment(source.authEnv, join(to, 'auth'))
  syncPath(join(to, 'shards'))
  const { restoredCopy: _copy, backupTaken: _taken, ...manifest } = source.manifest
  writeManifest(to, { ...manifest, restoredCopy: true, backupTaken: started })
  syncPath(to)
  lastBackupSeconds.set(started / 1000)
  return { to, shards: manifest.shards, taken: new Date(started).toISOString(), tookMs: Date.now() - started }
}
