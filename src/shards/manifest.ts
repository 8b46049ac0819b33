// The data directory's manifest: what a start must know before it opens
// anything. The shard count is fixed when the directory is created (a
// tenant's shard is its hash modulo that count); the master key check tells
// a wrong key before any data is touched; `formatVersion` says which disk
// format the files are in, so a newer build migrates an older directory and
// an older build refuses a newer one (builds of format 1 predate the field
// and do not check it: docs/design/disk-format.md).
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { ConfigError } from '../config/load-config'

/**
 * 1: the first format (manifests without `formatVersion`).
 * 2: the key-slot counter of a shard is keyed ['@nextSlot'], not
 *    ['nextSlot'] (a tenant could be called that; workers/store/migrate-shard.ts),
 *    and the auth store's refresh-token user index uses array keys [sub, hash]
 *    (rebuilt at start: src/main.ts). Both migrated at start.
 * 3: each shard keeps an owner index [tenant, owner, ns, type, id] of its
 *    nodes, so a revocation removes the search terms of the consent's
 *    data; built from the nodes at start.
 * 4: each shard has a journal (shards/N/journal/) in front of its LMDB, and
 *    its LMDB records the journal position it holds; a build that reads only
 *    format 3 would ignore a journal not yet replayed. Nothing to migrate: a
 *    shard without a journal starts one.
 * 5: a journaled shard's LMDB is synced only at the journal's checkpoints,
 *    and shards/N/lmdb-checkpoint holds the meta pages a start puts back
 *    after a power loss (workers/store/lmdb-checkpoint.ts); a format-4
 *    build would open whatever meta page a power loss left. Nothing to
 *    migrate: every open writes a checkpoint.
 * 6: each shard indexes its consents by subject [tenant, subject, ref] and
 *    its relations by owner [tenant, owner, relation...], and a consent
 *    records the client that created it and its last change; the indexes
 *    are built from the consents and relations at start
 *    (workers/store/migrate-shard.ts).
 */
export const FORMAT_VERSION = 6

export interface Manifest {
  /**
   * The same number as formatVersion. Builds from before formatVersion read
   * only `format` and refuse anything but 1, so a directory migrated past
   * format 1 is refused by them instead of opened (an old build would reuse
   * key slot 0 and overwrite a data key).
   */
  format: number
  formatVersion: number
  shards: number
  created: number
  /** HMAC of a fixed label under the master key: tells a wrong master key at start, before any data is touched. */
  masterKeyCheck: string
  /**
   * Random, new at creation and at every restore: the shred log's lines name
   * it, so a restore applies the revocations of the installation its backup
   * came from and not those of another line of restores (src/crypto/shred-log.ts).
   */
  generation?: string
  /** Set in a backup's manifest (src/backups/): a start must apply the shred log before it serves. */
  restoredCopy?: boolean
  /** Epoch ms when the backup began (a backup's manifest only). */
  backupTaken?: number
}

export function manifestPath(dataDir: string): string {
  return join(dataDir, 'manifest.json')
}

export function writeManifest(dataDir: string, manifest: Manifest): void {
  const path = manifestPath(dataDir)
  // Written to a temporary file, synced, then renamed: a crash leaves the old manifest or the new one, whole.
  const tmp = `${path}.tmp`
  const fd = openSync(tmp, 'w', 0o600)
  writeSync(fd, JSON.stringify(manifest) + '\n')
  fsyncSync(fd)
  closeSync(fd)
  renameSync(tmp, path)
}

/** Files a start of this server leaves in a data directory; anything else is the operator's. */
const DATA_ENTRIES = ['shards', 'auth']

/**
 * The manifest of an existing data directory, or undefined for a new one. A
 * directory that holds data but no manifest is refused: starting it as new
 * would skip the master key check and could pick another shard count, making
 * all data invisible.
 */
export function readManifest(dataDir: string): Manifest | undefined {
  const path = manifestPath(dataDir)
  if (!existsSync(path)) {
    const found = existsSync(dataDir) ? readdirSync(dataDir).filter((e) => DATA_ENTRIES.includes(e)) : []
    if (found.length > 0) {
      throw new ConfigError(`data directory ${dataDir} holds data (${found.join(', ')}) but no manifest.json; restore manifest.json from a backup of this directory (it records the shard count and the master key check), or move the directory away to start empty`)
    }
    return undefined
  }
  let doc: unknown
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new ConfigError(`data directory manifest ${path} is unreadable (${(err as Error).message}); restore it from a backup of this directory`)
  }
  const m = doc as Partial<Manifest>
  if (m === null || typeof m !== 'object' || !Number.isInteger(m.format) || !Number.isInteger(m.shards) || (m.shards as number) < 1) {
    throw new ConfigError(`data directory manifest ${path} is not a manifest this server wrote; restore it from a backup of this directory`)
  }
  const formatVersion = m.formatVersion ?? m.format ?? 1
  if (!Number.isInteger(formatVersion) || formatVersion < 1) {
    throw new ConfigError(`data directory manifest ${path} has an invalid formatVersion; restore it from a backup of this directory`)
  }
  if (formatVersion > FORMAT_VERSION) {
    throw new ConfigError(`data directory ${dataDir} is in disk format ${formatVersion}, written by a newer version of this server; this one reads formats up to ${FORMAT_VERSION}: start the newer version`)
  }
  checkShardDirectories(dataDir, m.shards as number)
  return { ...(m as Manifest), formatVersion }
}

/**
 * The shard directories must be exactly 0 .. shards-1: a tenant's shard is
 * its hash modulo the count, so another count would look every element up in
 * the wrong shard (all 404) and write new ones beside them. None at all is
 * left to the per-shard checks (data.mdb missing).
 */
function checkShardDirectories(dataDir: string, shards: number): void {
  const dir = join(dataDir, 'shards')
  const found = existsSync(dir) ? readdirSync(dir).filter((e) => /^(0|[1-9]\d*)$/.test(e)).map(Number).sort((a, b) => a - b) : []
  const n = found.length
  if (n === 0 || (n === shards && found[n - 1] === shards - 1)) return
  const contiguous = found[n - 1] === n - 1
  const held = contiguous ? `${n === 1 ? 'shards/0' : `shards/0 to shards/${n - 1}`} (${n} shard${n === 1 ? '' : 's'})` : `shards/${found.join(', shards/')}`
  const fix = contiguous ? `set "shards" back to ${n} in manifest.json, or restore the directory from a backup` : 'restore the directory from a backup'
  throw new ConfigError(`data directory ${dataDir}: manifest.json says "shards": ${shards}, but the directory holds ${held}; the shard count cannot change once the directory is created: ${fix}`)
}

/** Refuses a master key that does not belong to the directory (a manifest of format 1 may lack the check: it is added). */
export function checkMasterKey(dataDir: string, manifest: Manifest, check: string): Manifest {
  if (manifest.masterKeyCheck !== undefined && manifest.masterKeyCheck !== check) {
    throw new ConfigError(`the master key does not belong to the data directory ${dataDir}; start with the MASTER_KEY_FILE it was created with`)
  }
  return { ...manifest, masterKeyCheck: check }
}

export function createManifest(dataDir: string, shards: number, now: number, masterKeyCheck: string): Manifest {
  mkdirSync(dataDir, { recursive: true })
  const manifest: Manifest = { format: FORMAT_VERSION, formatVersion: FORMAT_VERSION, shards, created: now, masterKeyCheck, generation: newGeneration() }
  writeManifest(dataDir, manifest)
  return manifest
}

export function newGeneration(): string {
  return randomBytes(12).toString('base64url')
}
