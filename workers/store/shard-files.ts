// Start-up checks of a shard's files before LMDB opens them. LMDB trusts its
// files: a truncated data.mdb opens and then kills the process (SIGBUS) on
// the first read past the end, and an empty one is silently made a new, empty
// shard. So the shard refuses to open unless its files are what they say.
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { readMetaPages } from './lmdb-meta'

export class ShardDamage extends Error {}

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
  const meta = readMetaPages(data)
  if (meta === undefined) throw new ShardDamage(`${where}: data.mdb does not start with an LMDB meta page (damaged or not an LMDB file); ${restore}`)
  const needed = (meta.lastPage + 1) * meta.pageSize
  if (st.size < needed) {
    throw new ShardDamage(`${where}: data.mdb is truncated: ${st.size} bytes, but its last page ends at ${needed}; ${restore}`)
  }
  const keys = join(dir, 'keys.bin')
  if (existsSync(keys) && !statSync(keys).isFile()) throw new ShardDamage(`${where}: keys.bin is not a regular file; ${restore}`)
}
