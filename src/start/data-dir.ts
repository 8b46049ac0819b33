// Opening the data directory at start: its manifest (or a new one), the
// master key it was created with, and the disk format it is in. Nothing is
// opened before this says the directory, the key and this build belong
// together.
import { loadOrCreateMasterKey, masterKeyCheck } from '../crypto/master-key'
import { checkMasterKey, createManifest, FORMAT_VERSION, newGeneration, readManifest, writeManifest, type Manifest } from '../shards/manifest'
import { restoreOf, type Restore } from '../backups/restore'

export interface OpenedDataDir {
  manifest: Manifest
  masterKey: Buffer
  /** true when this start created the directory */
  created: boolean
  /** The disk format the files are in; older ones are migrated as the stores open. */
  formatOnDisk: number
  /** The manifest must be rewritten once the stores opened (format migrated, the master key check or generation added, or a restore done). */
  rewrite: boolean
  /** A restored backup: the generation whose shred-log entries the shards apply before serving. */
  restore: Restore | undefined
}

export function openDataDir(dataDir: string, masterKeyFile: string, shardsIfNew: number, now: number, shredLog: string): OpenedDataDir {
  const existing = readManifest(dataDir)
  const masterKey = loadOrCreateMasterKey(masterKeyFile, existing === undefined)
  const check = masterKeyCheck(masterKey)
  if (existing === undefined) {
    return { manifest: createManifest(dataDir, shardsIfNew, now, check), masterKey, created: true, formatOnDisk: FORMAT_VERSION, rewrite: false, restore: undefined }
  }
  const manifest = checkMasterKey(dataDir, existing, check)
  const restore = restoreOf(dataDir, existing, shredLog)
  // A restored copy starts a generation of its own: its revocations must not shred the original's later slots.
  const generation = restore !== undefined || existing.generation === undefined ? newGeneration() : existing.generation
  const { restoredCopy: _copy, backupTaken: _taken, ...kept } = manifest
  return {
    manifest: { ...kept, format: FORMAT_VERSION, formatVersion: FORMAT_VERSION, generation },
    masterKey,
    created: false,
    formatOnDisk: existing.formatVersion,
    rewrite: existing.formatVersion !== FORMAT_VERSION || existing.masterKeyCheck === undefined || generation !== existing.generation,
    restore,
  }
}

/** After every store opened (and migrated): the manifest says the current format. */
export function recordFormat(dataDir: string, opened: OpenedDataDir): void {
  if (opened.rewrite) writeManifest(dataDir, opened.manifest)
}
