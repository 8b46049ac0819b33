// The data directory as a start opens it: private, locked against a second
// server, its manifest and master key read, every environment verified.
import { ensureShredLog } from '../crypto/shred-log'
import { readKekFile } from '../crypto/kek-file'
import { now } from '../core/clock'
import type { Config } from '../config/load-config'
import { log } from '../telemetry/log'
import { openDataDir, recordFormat, type OpenedDataDir } from './data-dir'
import { lockDataDir, type DataDirLock } from './data-dir-lock'
import { privateDataDir } from './file-modes'
import { environmentsOf, verifyEnvironments } from './lmdb-check'

export interface ServerData {
  lock: DataDirLock
  opened: OpenedDataDir
}

export async function openServerData(config: Config): Promise<ServerData> {
  // Cluster mode: the KEK file every host shares must be there and well-formed (one start line otherwise); it is never created.
  if (config.cluster !== undefined) readKekFile(config.cluster.kekFile)
  privateDataDir(config.dataDir)
  // Before anything in the directory is opened: a second server would serve stale caches and lose writes.
  const lock = await lockDataDir(config.dataDir, 'the server')
  const opened = openDataDir(config.dataDir, config.masterKeyFile, config.shards, now(), config.shredLog)
  // After the restored-copy check (which needs the original's log): every installation keeps one from its first start.
  ensureShredLog(config.shredLog)
  // Every page read once, in a child process, before this one opens anything: a damaged page refuses the start.
  await verifyEnvironments(environmentsOf(config.dataDir))
  const { manifest, created } = opened
  if (!created && manifest.shards !== config.shards && (process.argv.includes('--shards') || process.env.SHARDS !== undefined)) {
    log.info(`note: ${config.dataDir} was created with ${manifest.shards} shards; --shards applies only to a new data directory`)
  }
  return { lock, opened }
}

/** Once the shards are open in the format of this build: the manifest says so, and a restored copy is said to be one. */
export function recordServing(config: Config, opened: OpenedDataDir): void {
  recordFormat(config.dataDir, opened)
  if (opened.restore !== undefined) log.info({ dataDir: config.dataDir, shredLog: config.shredLog }, `restored: ${config.dataDir} is a restored backup, the shred log ${config.shredLog} applied; it now serves as an installation of its own`)
}
