// A shard snapshot's files on this host (docs/design/replication.md, "Snapshots"):
// made by the owner with the online copy backups use (backup-copy.ts: LMDB's
// snapshot of the committed state, then the key file), and put back into a
// running standby's open environment.
//
// What leaves the host is what is at rest already: sealed values and data
// keys wrapped under the master key. The key file is copied after LMDB's
// snapshot, so it may still hold the key of a consent the snapshot already
// shows revoked (its slot is destroyed just after the commit); such slots are
// zeroed in the copy before it is uploaded, so a snapshot never carries a
// key its own records say was shredded.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readSync, rmSync, statSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { open, type RootDatabase } from 'lmdb'
import { replaceRecords } from '../../../src/replication/replace-records'
import type { SnapshotSource } from '../../../src/replication/snapshots'
import { backupShard } from '../../crypto/backup-copy'
import { SLOT_BYTES } from '../../crypto/key-file'
import type { Key } from '../../store/keys'
import { DB_OPTIONS, forgetUncommitted, type ShardStore } from '../../store/shard-store'
import { APPLIED_KEY, REPLICATION_DB, setAppliedSequence } from './apply'
import { shardDatabases, type Recorder } from './recorder'

/** The files of a snapshot, in upload order. */
export const SNAPSHOT_FILES = ['data.mdb', 'keys.bin'] as const

/** A scratch directory for one shard's snapshot beside the data directory's shards (never inside `shards/`, which the start-up check walks). */
export function scratchDir(store: ShardStore, use: 'out' | 'in'): string {
  const dataDir = dirname(dirname(dirname(store.keyFile.path)))
  // No dot in the name: lmdb-js takes a path with an extension for the data file itself.
  const dir = join(dataDir, 'snapshots', `${use}-${store.shard}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  return dir
}

function openCopy(dir: string, readOnly: boolean): RootDatabase {
  return open({ path: dir, readOnly, maxDbs: 32 })
}

/** Zeroes slot `slot` of the key file at `path` (not synced: the copy is uploaded, then removed). */
function zeroSlot(fd: number, slot: number): void {
  writeSync(fd, Buffer.alloc(SLOT_BYTES), 0, SLOT_BYTES, slot * SLOT_BYTES)
}

/**
 * Copies the shard into `dir` while it keeps serving; returns the stream
 * sequence the copy holds (its own `applied`, committed with its data).
 */
export async function takeSnapshotCopy(store: ShardStore, dir: string): Promise<number> {
  // backupShard wants a new target directory.
  rmSync(dir, { recursive: true, force: true })
  await backupShard(store.env, store.keyFile.path, dir)
  const env = openCopy(dir, true)
  try {
    const applied = env.openDB<number, string>(REPLICATION_DB, DB_OPTIONS as never).get(APPLIED_KEY) ?? 0
    const consents = env.openDB<{ status?: unknown; slot?: unknown }, Key>('consents', DB_OPTIONS)
    const fd = openSync(join(dir, 'keys.bin'), 'r+')
    try {
      for (const { value } of consents.getRange()) {
        if (value.status === 'revoked' && typeof value.slot === 'number') zeroSlot(fd, value.slot)
      }
    } finally {
      closeSync(fd)
    }
    return applied
  } finally {
    await env.close()
  }
}

/** The wrapped keys of a key file, whole (empty when missing). */
function readKeyFile(path: string): Buffer {
  if (!existsSync(path)) return Buffer.alloc(0)
  const size = statSync(path).size
  const buf = Buffer.alloc(size)
  const fd = openSync(path, 'r')
  try {
    let at = 0
    while (at < size) {
      const n = readSync(fd, buf, at, size - at, at)
      if (n === 0) break
      at += n
    }
  } finally {
    closeSync(fd)
  }
  return buf
}

const isZero = (b: Buffer): boolean => b.every((x) => x === 0)

/**
 * Puts the snapshot in `dir` into the shard's open environment: the key
 * slots it holds that this host lacks, then every database replaced by the
 * snapshot's, then its sequence. Runs as several transactions (the thread
 * keeps renewing other shards' leases meanwhile); the first sets the applied
 * sequence to 0, so a restore cut short by a crash leaves a shard that
 * restores again rather than a mixture that looks caught up. Returns the
 * sequence restored and the slots this host held that the snapshot has
 * destroyed (the caller destroys them, shred log first, now that the
 * records say revoked).
 */
export async function restoreSnapshotCopy(store: ShardStore, recorder: Recorder, dir: string): Promise<{ sequence: number; destroyed: number[] }> {
  const snapshot = openCopy(dir, true)
  try {
    const sequence = snapshot.openDB<number, string>(REPLICATION_DB, DB_OPTIONS as never).get(APPLIED_KEY) ?? 0
    // Keys first: a record restored below never lacks its key, and an extra key is only an unused slot.
    const wanted = readKeyFile(join(dir, 'keys.bin'))
    const have = readKeyFile(store.keyFile.path)
    const destroyed: number[] = []
    const fd = openSync(store.keyFile.path, 'r+')
    try {
      for (let at = 0; at < wanted.length; at += SLOT_BYTES) {
        const slot = at / SLOT_BYTES
        const w = wanted.subarray(at, at + SLOT_BYTES)
        const h = have.subarray(at, at + SLOT_BYTES)
        if (isZero(w)) {
          if (h.length === SLOT_BYTES && !isZero(h)) destroyed.push(slot)
        } else if (!w.equals(h)) writeSync(fd, w, 0, w.length, at)
      }
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    await store.env.transaction(() => setAppliedSequence(store, 0))
    const databases = shardDatabases(store)
    for (const [name, raw] of recorder.raw) {
      await replaceRecords<Key>(databases.get(name)!, snapshot.openDB<unknown, Key>(name, DB_OPTIONS), raw, (run) => store.env.transaction(run))
    }
    await store.env.transaction(() => setAppliedSequence(store, sequence))
    await store.env.flushed
    forgetUncommitted(store)
    return { sequence, destroyed }
  } finally {
    await snapshot.close()
  }
}

/** A shard as the generic snapshots see it (src/replication/snapshots.ts). */
export function shardSnapshotSource(store: ShardStore, recorder: Recorder): SnapshotSource {
  return {
    unit: store.shard,
    name: `shard ${store.shard}`,
    files: SNAPSHOT_FILES,
    scratch: (use) => scratchDir(store, use),
    copy: (dir) => takeSnapshotCopy(store, dir),
    restore: (dir) => restoreSnapshotCopy(store, recorder, dir),
  }
}
