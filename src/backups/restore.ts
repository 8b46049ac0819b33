// Starting on a restored backup: its manifest says `restoredCopy`, and the
// shred log of the installation it came from must be there, so that every
// data key destroyed after the backup is destroyed in the copy too before
// anything is served (the shards apply it: workers/store/shred-keys.ts).
import { existsSync } from 'node:fs'
import { ConfigError } from '../config/load-config'
import type { Manifest } from '../shards/manifest'

export interface Restore {
  /** The generation of the installation the backup was taken from: the shred-log lines to apply. */
  generation: string | undefined
}

export function restoreOf(dataDir: string, manifest: Manifest, shredLog: string): Restore | undefined {
  if (manifest.restoredCopy !== true) return undefined
  if (!existsSync(shredLog)) {
    const taken = manifest.backupTaken === undefined ? '' : ` taken ${new Date(manifest.backupTaken).toISOString()}`
    throw new ConfigError(`data directory ${dataDir} is a restored backup${taken} and the shred log ${shredLog} is missing; start it with the shred log of the installation it was taken from (--shred-log / SHRED_LOG_FILE), so that consents revoked after the backup stay revoked`)
  }
  return { generation: manifest.generation }
}
