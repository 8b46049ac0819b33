// Copies for a backup (src/backups/take-backup.ts): here beside the key file
// because both threads use them (the actors for their shards, the front
// thread for the auth store and the stopped server's shards). A shard is
// copied by its actor while it keeps serving: LMDB copies a snapshot of the committed
// state, then the key file is copied. Keys created after the snapshot are
// extra slots nobody records (the restored shard hands them out again);
// keys destroyed after it were written to the shred log first, which a
// restore applies, so no key the copy's records need is missing and no key
// revoked meanwhile comes back.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { copyFileSynced, syncPath } from '../../src/crypto/synced-files'
import type { RootDatabase } from 'lmdb'

/** Copies one environment (a snapshot, while it is written) into `target`/data.mdb, synced. */
export async function copyEnvironment(env: RootDatabase, target: string): Promise<void> {
  mkdirSync(target, { recursive: true, mode: 0o700 })
  await env.backup(target, false)
  syncPath(join(target, 'data.mdb'))
}

/** The shard's environment, then its key file (after the snapshot: see above), into `target`. */
export async function backupShard(env: RootDatabase, keyFile: string, target: string): Promise<void> {
  await copyEnvironment(env, target)
  copyFileSynced(keyFile, join(target, 'keys.bin'))
  syncPath(target)
}
