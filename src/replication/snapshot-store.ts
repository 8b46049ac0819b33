// Where snapshots of replicated units (each shard, and the auth store) live
// in NATS (docs/cluster.md, "Snapshots"). The
// issue asks for JetStream's object store; its client (@nats-io/obj) is not
// among the project's packages, so this is the same idea on plain JetStream:
// a snapshot's bytes are chunk messages on its own subject of SNAPSHOT_STREAM
// (R3 like the unit streams), and a KV bucket lists each unit's kept
// snapshots with the stream sequences of their chunks and a SHA-256 over
// them. A snapshot is usable only once it is in that list, so a half-written
// one is never restored; chunks nobody lists any more are purged by subject
// prefix and sequence.
import { closeSync, openSync, readSync, writeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import type { NatsConnection } from '@nats-io/nats-core'
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { Kvm, type KV } from '@nats-io/kv'
import { SNAPSHOT_BUCKET, SNAPSHOT_STREAM, snapshotSubject } from '../contract/cluster-names'

/** Below the servers' default max_payload (1 MB), whatever they were configured with. */
const CHUNK_BYTES = 512 * 1024
/** Chunk publishes in flight at once: enough to hide the R3 round trip, few enough not to flood the leader. */
const WINDOW = 8

export interface SnapshotFile {
  name: string
  size: number
}

export interface SnapshotInfo {
  /** The last sequence of the unit's stream inside it: a restore replays from the next one. */
  sequence: number
  node: string
  epoch: number
  takenAt: string
  /** The files, concatenated in this order into the chunks. */
  files: SnapshotFile[]
  sha256: string
  /** SNAPSHOT_STREAM sequences of the chunks, in order. */
  chunks: number[]
}

/** A unit's kept snapshots, oldest first, and the KV revision they were read at (undefined: none yet). */
export interface SnapshotIndex {
  snapshots: SnapshotInfo[]
  revision: number | undefined
}

/** A replicated unit whose snapshots are kept: a shard by its number, or the auth store. */
export type SnapshotUnit = number | 'auth'

const indexKey = (unit: SnapshotUnit): string => (unit === 'auth' ? 'auth' : `shard.${unit}`)
const unitPrefix = (unit: SnapshotUnit): string => `platform.snapshots.${unit}.>`

function isInfo(v: unknown): v is SnapshotInfo {
  const o = v as Partial<SnapshotInfo> | null
  return o !== null && typeof o === 'object' && typeof o.sequence === 'number' && typeof o.sha256 === 'string' && Array.isArray(o.files) && Array.isArray(o.chunks)
}

export class SnapshotStore {
  private constructor(private readonly js: JetStreamClient, private readonly jsm: JetStreamManager, private readonly kv: KV) {}

  /** Opens the stream and the bucket, creating them when no host has yet (R3 on three or more NATS servers, else R1). */
  static async open(nc: NatsConnection, servers: number, timeoutMs: number): Promise<SnapshotStore> {
    const jsm = await jetstreamManager(nc, { timeout: timeoutMs })
    const replicas = servers >= 3 ? 3 : 1
    try {
      await jsm.streams.info(SNAPSHOT_STREAM)
    } catch {
      // Two hosts creating it at once with the same configuration both succeed.
      await jsm.streams.add({ name: SNAPSHOT_STREAM, subjects: ['platform.snapshots.>'], num_replicas: replicas, storage: 'file' as never })
    }
    const kvm = new Kvm(nc)
    let kv: KV
    try {
      kv = await kvm.open(SNAPSHOT_BUCKET)
      await kv.status()
    } catch {
      kv = await kvm.create(SNAPSHOT_BUCKET, { replicas, history: 1 })
    }
    return new SnapshotStore(jetstream(nc, { timeout: timeoutMs }), jsm, kv)
  }

  async index(unit: SnapshotUnit): Promise<SnapshotIndex> {
    const entry = await this.kv.get(indexKey(unit))
    if (entry === null || entry.operation !== 'PUT') return { snapshots: [], revision: entry?.revision }
    const parsed = entry.json<{ snapshots?: unknown }>()
    const snapshots = Array.isArray(parsed.snapshots) ? parsed.snapshots.filter(isInfo) : []
    return { snapshots, revision: entry.revision }
  }

  /** Publishes `files` of `dir` as the chunks of the unit's snapshot at `sequence`; returns where they went. */
  async upload(unit: SnapshotUnit, sequence: number, dir: string, files: readonly string[]): Promise<Pick<SnapshotInfo, 'files' | 'sha256' | 'chunks'>> {
    const subject = snapshotSubject(unit, sequence)
    // Left over from an upload that died half-way at the same sequence: never listed, so safe to drop.
    await this.jsm.streams.purge(SNAPSHOT_STREAM, { filter: subject })
    const hash = createHash('sha256')
    const chunks: number[] = []
    const inFlight: Promise<void>[] = []
    const sized: SnapshotFile[] = []
    let index = 0
    for (const name of files) {
      let size = 0
      const fd = openSync(join(dir, name), 'r')
      try {
        for (;;) {
          const buf = Buffer.alloc(CHUNK_BYTES)
          const n = readSync(fd, buf, 0, CHUNK_BYTES, null)
          if (n === 0) break
          const data = buf.subarray(0, n)
          hash.update(data)
          size += n
          const at = index++
          inFlight.push(this.js.publish(subject, data).then((ack) => { chunks[at] = ack.seq }))
          if (inFlight.length >= WINDOW) await Promise.all(inFlight.splice(0))
        }
      } finally {
        closeSync(fd)
      }
      sized.push({ name, size })
    }
    await Promise.all(inFlight)
    return { files: sized, sha256: hash.digest('hex'), chunks }
  }

  /** Writes the snapshot's files into `dir` (which exists), checking every chunk's subject and the checksum. */
  async download(unit: SnapshotUnit, info: SnapshotInfo, dir: string): Promise<void> {
    const subject = snapshotSubject(unit, info.sequence)
    const hash = createHash('sha256')
    let fileIndex = 0
    let left = info.files[0]?.size ?? 0
    let fd = info.files.length === 0 ? undefined : openSync(join(dir, info.files[0]!.name), 'w', 0o600)
    try {
      for (const seq of info.chunks) {
        const m = await this.jsm.streams.getMessage(SNAPSHOT_STREAM, { seq })
        if (m === null || m.subject !== subject) throw new Error(`snapshot ${unit}@${info.sequence}: chunk ${seq} is gone (dropped meanwhile)`)
        hash.update(m.data)
        let data = m.data
        while (data.length > 0) {
          // Files are back to back in the chunks; a chunk may end one file and start the next.
          while (left === 0 && fd !== undefined) {
            closeSync(fd)
            fd = ++fileIndex < info.files.length ? openSync(join(dir, info.files[fileIndex]!.name), 'w', 0o600) : undefined
            left = info.files[fileIndex]?.size ?? 0
          }
          if (fd === undefined) throw new Error(`snapshot ${unit}@${info.sequence}: more bytes than its files hold`)
          const n = Math.min(left, data.length)
          writeSync(fd, data, 0, n)
          left -= n
          data = data.subarray(n)
        }
      }
      // Trailing empty files (a key file with no slot yet).
      while (fd !== undefined && left === 0) {
        closeSync(fd)
        fd = ++fileIndex < info.files.length ? openSync(join(dir, info.files[fileIndex]!.name), 'w', 0o600) : undefined
        left = info.files[fileIndex]?.size ?? 0
      }
      if (fd !== undefined || left !== 0) throw new Error(`snapshot ${unit}@${info.sequence}: its chunks hold fewer bytes than its files`)
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
    if (hash.digest('hex') !== info.sha256) throw new Error(`snapshot ${unit}@${info.sequence}: checksum mismatch`)
  }

  /**
   * Lists `info` as the unit's newest snapshot, keeping the newest `keep`,
   * by compare-and-set on the revision `index` was read at (a former owner's
   * late snapshot loses). Returns the kept list, oldest first.
   */
  async record(unit: SnapshotUnit, index: SnapshotIndex, info: SnapshotInfo, keep: number): Promise<SnapshotInfo[]> {
    const kept = [...index.snapshots.filter((s) => s.sequence < info.sequence), info].slice(-keep)
    const value = JSON.stringify({ snapshots: kept })
    if (index.revision === undefined) await this.kv.create(indexKey(unit), value)
    else await this.kv.update(indexKey(unit), value, index.revision)
    return kept
  }

  /** Purges every chunk of the unit below `sequence` of SNAPSHOT_STREAM: dropped snapshots and half-written ones. */
  async dropChunksBelow(unit: SnapshotUnit, sequence: number): Promise<number> {
    // Nothing is below 1; and nats-server 2.9 takes a filtered purge up to 1 (or 0) as "every message of the filter".
    if (sequence <= 1) return 0
    return (await this.jsm.streams.purge(SNAPSHOT_STREAM, { filter: unitPrefix(unit), seq: sequence })).purged
  }
}
