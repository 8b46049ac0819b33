// A backup of a stopped server's data directory (the command holds its lock):
// the same copies the actors make online, made here from the files.
import { join } from 'node:path'
import { open, type RootDatabase } from 'lmdb'
import { ConfigError } from '../config/load-config'
import { readManifest } from '../shards/manifest'
import { backupShard } from '../../workers/crypto/backup-copy'
import { journalDir, ShardJournal } from '../../workers/journal/shard-journal'
import { takeBackup, type BackupResult } from './take-backup'

export async function backupStoppedDataDir(dataDir: string, to: string): Promise<BackupResult> {
  const manifest = readManifest(dataDir)
  if (manifest === undefined) throw new ConfigError(`${dataDir} holds no data directory (no manifest.json): pass the server's --data-dir`)
  for (let n = 0; n < manifest.shards; n++) {
    // Its LMDB may lack what the journal holds, and a power loss may have torn what it committed since its last sync.
    if (ShardJournal.holdsRecords(journalDir(join(dataDir, 'shards', String(n))))) {
      throw new ConfigError(`shard ${n} was not stopped cleanly (its journal holds writes its LMDB may lack): start the server once, stop it, then back up`)
    }
  }
  const opened: RootDatabase[] = []
  const env = (path: string): RootDatabase => {
    const e = open({ path })
    opened.push(e)
    return e
  }
  try {
    return await takeBackup({
      manifest,
      authEnv: env(join(dataDir, 'auth')),
      backupShards: async (target) => {
        for (let n = 0; n < manifest.shards; n++) {
          const dir = join(dataDir, 'shards', String(n))
          await backupShard(env(dir), join(dir, 'keys.bin'), join(target, 'shards', String(n)))
        }
      },
    }, to)
  } finally {
    for (const e of opened) await e.close()
  }
}
