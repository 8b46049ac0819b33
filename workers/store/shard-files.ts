// Start-up checks of a shard's files before LMDB opens them. LMDB trusts its
// files: a truncated data.mdb opens and then kills the process (SIGBUS) on
// the first read past the end, and an empty one is silently made a new, empty
// shard. So the shard refuses to open unless its files are what they say.
import { existsSync, statSync, openSync, readSync, closeSync } from 'node:fs'
import { join } from 'node:path'

export class ShardDamage extends Error {}

const MAGIC = 0xbeefc0de
/** Offsets in a meta page of the LMDB build lmdb-js ships (24-byte page header). */
const META = { magic: 24, pageSize: 48, lastPage: 144, txnId: 152 } as const

interface MetaPage { pageSize: number; lastPage: number; txnId: bigint }

function readMeta(fd: number, offset: number): MetaPage | undefined {
  const buf = Buffer.alloc(160)
  if (readSync(fd, buf, 0, buf.length, offset) < buf.length) return undefined
  if (buf.readUInt32LE(META.magic) !== MAGIC) return undefined
  return { pageSize: buf.readUInt32LE(META.pageSize), lastPage: Number(buf.readBigUInt64LE(META.lastPage)), txnId: buf.readBigUInt64LE(META.txnId) }
}

/** The newer of the two meta pages, or undefined when neither is an LMDB meta page. */
function newestMeta(path: string): MetaPage | undefined {
  const fd = openSync(path, 'r')
  try {
    const first = readMeta(fd, 0)
    if (first === undefined || first.pageSize < 512 || first.pageSize > 65536) return undefined
    const second = readMeta(fd, first.pageSize)
    return second !== undefined && second.txnId > first.txnId ? second : first
  } finally {
    closeSync(fd)
  }
}

const restore = 'restore the shard directory from a backup, or move the data directory away to start empty'

/**
 * `existing`: the data directory was made by an earlier start, so every shard
 * must already have its environment.
 */
export function verifyShardFiles(dir: string, shard: number | string, existing: boolean): void {
  const data = join(dir, 'data.mdb')
  const where = typeof shard === 'number' ? `shard ${shard} (${dir})` : `${shard} (${dir})`
  if (!existsSync(data)) {
    if (existing) throw new ShardDamage(`${where}: data.mdb is missing; ${restore}`)
    return
  }
  const st = statSync(data)
  if (!st.isFile()) throw new ShardDamage(`${where}: data.mdb is not a regular file; ${restore}`)
  if (st.size === 0) throw new ShardDamage(`${where}: data.mdb is empty; ${restore}`)
  const meta = newestMeta(data)
  if (meta === undefined) throw new ShardDamage(`${where}: data.mdb does not start with an LMDB meta page (damaged or not an LMDB file); ${restore}`)
  const needed = (meta.lastPage + 1) * meta.pageSize
  if (st.size < needed) {
    throw new ShardDamage(`${where}: data.mdb is truncated: ${st.size} bytes, but its last page ends at ${needed}; ${restore}`)
  }
  const keys = join(dir, 'keys.bin')
  if (existsSync(keys) && !statSync(keys).isFile()) throw new ShardDamage(`${where}: keys.bin is not a regular file; ${restore}`)
}
