// Reads LMDB environments to their end, in a process of its own: LMDB trusts
// its pages, and a damaged page makes it abort (an assertion) or fault
// (SIGBUS) in whatever process reads it. Run before the server opens the
// data directory (src/start/lmdb-check.ts), a damaged file stops this process, not
// the server, which then refuses to start with the reason.
//   node dist/workers/verify-lmdb.js <environment directory>...
// Prints one line per environment, "ok <dir>", "damaged <dir>: <reason>" or,
// when its files fail the structural checks (store/shard-files.ts),
// "refused <message>", and exits 1 after the first that is not ok.
import { existsSync } from 'node:fs'
import { basename, join } from 'node:path'
import { open } from 'lmdb'
import { ShardDamage, verifyShardFiles } from './store/shard-files'
import { restoreCheckpoint } from './store/lmdb-checkpoint'

function walk(dir: string): void {
  const env = open({ path: dir, readOnly: true, maxDbs: 64, encoding: 'binary' })
  try {
    // The main database's keys name the sub-databases.
    const names = [...env.getKeys()].filter((k): k is string => typeof k === 'string')
    for (const name of names) {
      const db = env.openDB(name, { encoding: 'binary', keyEncoding: 'binary' })
      // Keys and values: every branch, leaf and overflow page is read.
      for (const { value } of db.getRange()) if (!(value instanceof Uint8Array)) throw new Error(`a value of ${name} is not readable`)
    }
  } finally {
    void env.close()
  }
}

for (const dir of process.argv.slice(2)) {
  if (!existsSync(join(dir, 'data.mdb'))) continue
  const shard = /^\d+$/.test(basename(dir))
  // A shard's last checkpoint first (store/lmdb-checkpoint.ts): what was committed after it may be torn by a power loss.
  if (shard) restoreCheckpoint(dir)
  try {
    // Meta pages and size first: a truncated file would fault the walk.
    verifyShardFiles(dir, shard ? Number(basename(dir)) : 'the auth store', true)
  } catch (err) {
    if (!(err instanceof ShardDamage)) throw err
    console.log(`refused ${err.message}`)
    process.exit(1)
  }
  try {
    walk(dir)
    console.log(`ok ${dir}`)
  } catch (err) {
    console.log(`damaged ${dir}: ${(err as Error).message}`)
    process.exit(1)
  }
}
