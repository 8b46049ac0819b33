// The auth store's snapshots (docs/design/replication.md, "Snapshots"): the same
// policy and NATS storage as a shard's (src/replication/snapshots.ts), so
// its stream is purged below the oldest kept snapshot instead of growing
// with every token issued, and an empty host restores the newest one and
// replays only what followed. The copy is LMDB's online copy of the
// committed store (as a backup takes it); it carries what the stream
// carries already (records as stored: secrets only as digests, signing keys
// sealed by the master key), nothing more.
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { open, type Database, type RootDatabase } from 'lmdb'
import type { AuthStore } from '../auth/models/auth-store'
import { KEY_OPTIONS } from '../contract/key-encoding'
import type { EffectKey } from '../replication/effects'
import { replaceRecords } from '../replication/replace-records'
import type { SnapshotSource } from '../replication/snapshots'
import { copyEnvironment } from '../../workers/crypto/backup-copy'
import type { AuthRecorder } from './auth-recorder'

/** The auth store's database of its stream position: `applied` -> the last stream sequence it holds. */
export const REPLICATION_DB = 'replication'
export const APPLIED_KEY = 'applied'

export function appliedDb(env: RootDatabase): Database<number, string> {
  return env.openDB<number, string>(REPLICATION_DB, KEY_OPTIONS as never)
}

function copyEnv(dir: string): RootDatabase {
  return open({ path: dir, readOnly: true, maxDbs: 32 })
}

export function authSnapshotSource(store: AuthStore, recorder: AuthRecorder, dataDir: string, forget: () => void): SnapshotSource {
  return {
    unit: 'auth',
    name: 'the auth store',
    files: ['data.mdb'],
    scratch(use) {
      // No dot in the name: lmdb-js takes a path with an extension for the data file itself.
      const dir = join(dataDir, 'snapshots', `${use}-auth`)
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      return dir
    },
    async copy(dir) {
      rmSync(dir, { recursive: true, force: true })
      await copyEnvironment(store.env, dir)
      const env = copyEnv(dir)
      try {
        return appliedDb(env).get(APPLIED_KEY) ?? 0
      } finally {
        await env.close()
      }
    },
    async restore(dir) {
      const snapshot = copyEnv(dir)
      try {
        const sequence = appliedDb(snapshot).get(APPLIED_KEY) ?? 0
        const applied = appliedDb(recorder.store.env)
        // First: a restore cut short by a crash leaves a store that restores again, never a mixture that looks caught up.
        await recorder.env.transaction(() => applied.putSync(APPLIED_KEY, 0))
        for (const [name, raw] of recorder.raw) {
          await replaceRecords<EffectKey>(raw.db, snapshot.openDB<unknown, EffectKey>(name, KEY_OPTIONS as never), raw, (run) => recorder.env.transaction(run))
        }
        await recorder.env.transaction(() => applied.putSync(APPLIED_KEY, sequence))
        await recorder.env.flushed
        forget()
        return { sequence, destroyed: [] }
      } finally {
        await snapshot.close()
      }
    },
  }
}
