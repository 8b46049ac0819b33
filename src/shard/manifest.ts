// The data directory's manifest: the shard count is fixed when the directory
// is created, because a tenant's shard is its hash modulo that count.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../config'

export interface Manifest {
  format: 1
  shards: number
  created: number
  /** HMAC of a fixed label under the master key: tells a wrong master key at start, before any data is touched. */
  masterKeyCheck: string
}

export function manifestPath(dataDir: string): string {
  return join(dataDir, 'manifest.json')
}

function writeManifest(path: string, manifest: Manifest): void {
  // Written to a temporary file, synced, then renamed: a crash leaves the old manifest or the new one, whole.
  const tmp = `${path}.tmp`
  const fd = openSync(tmp, 'w', 0o600)
  writeSync(fd, JSON.stringify(manifest) + '\n')
  fsyncSync(fd)
  closeSync(fd)
  renameSync(tmp, path)
}

export function readOrCreateManifest(dataDir: string, shardsIfNew: number, now: number, masterKeyCheck: string): { manifest: Manifest; created: boolean } {
  const path = manifestPath(dataDir)
  if (existsSync(path)) {
    let doc: unknown
    try {
      doc = JSON.parse(readFileSync(path, 'utf8'))
    } catch (err) {
      throw new ConfigError(`data directory manifest ${path} is unreadable: ${(err as Error).message}`)
    }
    const m = doc as Partial<Manifest>
    if (m.format !== 1 || !Number.isInteger(m.shards) || (m.shards as number) < 1) {
      throw new ConfigError(`data directory manifest ${path} is not a format-1 manifest`)
    }
    if (m.masterKeyCheck !== undefined && m.masterKeyCheck !== masterKeyCheck) {
      throw new ConfigError(`the master key does not belong to the data directory ${dataDir}; start with the MASTER_KEY_FILE it was created with`)
    }
    const manifest = { ...(m as Manifest), masterKeyCheck }
    if (m.masterKeyCheck === undefined) writeManifest(path, manifest)
    return { manifest, created: false }
  }
  mkdirSync(dataDir, { recursive: true })
  const manifest: Manifest = { format: 1, shards: shardsIfNew, created: now, masterKeyCheck }
  writeManifest(path, manifest)
  return { manifest, created: true }
}
