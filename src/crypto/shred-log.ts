// The shred log: one line per destroyed data key, appended (and fsynced)
// before the key's slot is zeroed, kept outside the data directory
// (SHRED_LOG_FILE, default beside the master key). A backup taken before a
// revocation still holds the revoked consent's wrapped key; a start on a
// restored copy applies this log first, so the restored installation never
// opens data revoked after the backup (docs/design/data-protection.md, *Backup and
// restore*). A line names the installation's generation, the shard and the
// slot: no tenant, consent reference or key material.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { ConfigError } from '../config/load-config'

export interface ShredEntry {
  /** The generation of the installation that destroyed the key (manifest.json `generation`). */
  generation: string
  shard: number
  slot: number
}

/** Creates an empty log (0600, its directory 0700) unless it exists. */
export function ensureShredLog(path: string): void {
  if (existsSync(path)) {
    // A directory there would fail the first revocation, after the start.
    if (!statSync(path).isFile()) throw new ConfigError(`the shred log ${path} is not a regular file; name the log file itself with --shred-log / SHRED_LOG_FILE`)
    return
  }
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
    closeSync(openSync(path, 'a', 0o600))
  } catch (err) {
    throw new ConfigError(`the shred log ${path} cannot be created (${(err as Error).message}); name a writable place with --shred-log / SHRED_LOG_FILE`)
  }
}

/** Appends the entries and syncs them: only then may their slots be zeroed. */
export function appendShredLog(path: string, generation: string, shard: number, slots: readonly number[]): void {
  if (slots.length === 0) return
  const at = new Date().toISOString()
  const text = slots.map((slot) => JSON.stringify({ generation, shard, slot, at })).join('\n') + '\n'
  // O_APPEND: the actors of one process (and nothing else) append; each line is written whole.
  const fd = openSync(path, 'a', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function entryOf(line: string): ShredEntry | undefined {
  try {
    const e = JSON.parse(line) as Partial<ShredEntry>
    if (typeof e.generation === 'string' && Number.isInteger(e.shard) && Number.isInteger(e.slot)) {
      return { generation: e.generation, shard: e.shard!, slot: e.slot! }
    }
  } catch {
    // a line torn by a crash during its append: its slot was not zeroed either
  }
  return undefined
}

/** The slots of `shard` the log says `generation` destroyed. */
export function shreddedSlots(path: string, generation: string, shard: number): Set<number> {
  const slots = new Set<number>()
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const e = line === '' ? undefined : entryOf(line)
    if (e !== undefined && e.generation === generation && e.shard === shard) slots.add(e.slot)
  }
  return slots
}
