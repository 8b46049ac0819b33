// Where snapshots of replicated units (each shard, and the auth store) live
// in NATS (docs/design/replication.md, "Snapshots"): one object per snapshot in the
// JetStream object store SNAPSHOT_OBJECTS (R3 like the unit streams; the
// object store chunks it, and checks its SHA-256 digest on the way back),
// and a KV bucket listing each unit's kept snapshots. A snapshot is usable
// only once it is in that list (written by compare-and-set, so a former
// owner's late snapshot loses), so a half-written one is never restored;
// objects nobody lists any more are deleted by the owner after it lists a
// new one.
import { closeSync, openSync, readSync, writeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import type { NatsConnection } from '@nats-io/nats-core'
import { jetstream } from '@nats-io/jetstream'
import type { KV } from '@nats-io/kv'
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj'
import { openBucket } from './lease-bucket'
import { withTimeout } from './with-timeout'
import { untilItWorks } from './start-retry'
import { SNAPSHOT_BUCKET, SNAPSHOT_OBJECTS, snapshotObject } from '../contract/cluster-names'

/** Below the servers' default max_payload (1 MB), whatever they were configured with. */
const CHUNK_BYTES = 512 * 1024

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
  /** The files, concatenated in this order into the object. */
  files: SnapshotFile[]
  /** SHA-256 of the object's bytes, hex (checked again after the download). */
  sha256: string
  /** The object's name in SNAPSHOT_OBJECTS. */
  object: string
}

/** A unit's kept snapshots, oldest first, and the KV revision they were read at (undefined: none yet). */
export interface SnapshotIndex {
  snapshots: SnapshotInfo[]
  revision: number | undefined
}

/** A replicated unit whose snapshots are kept: a shard by its number, or the auth store. */
export type SnapshotUnit = number | 'auth'

const indexKey = (unit: SnapshotUnit): string => (unit === 'auth' ? 'auth' : `shard.${unit}`)

function isInfo(v: unknown): v is SnapshotInfo {
  const o = v as Partial<SnapshotInfo> | null
  return o !== null && typeof o === 'object' && typeof o.sequence === 'number' && typeof o.sha256 === 'string' && Array.isArray(o.files) && typeof o.object === 'string'
}

/** The files of `dir`, back to back, read a chunk at a time. */
function filesStream(dir: string, files: readonly string[], hash: ReturnType<typeof createHash>, sized: SnapshotFile[]): ReadableStream<Uint8Array> {
  let index = 0
  let fd: number | undefined
  let size = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      for (;;) {
        if (fd === undefined) {
          if (index === files.length) {
            controller.close()
            return
          }
          fd = openSync(join(dir, files[index]!), 'r')
          size = 0
        }
        const buf = Buffer.alloc(CHUNK_BYTES)
        const n = readSync(fd, buf, 0, CHUNK_BYTES, null)
        if (n > 0) {
          const data = buf.subarray(0, n)
          hash.update(data)
          size += n
          controller.enqueue(data)
          return
        }
        closeSync(fd)
        fd = undefined
        sized.push({ name: files[index]!, size })
        index++
      }
    },
    cancel() {
      if (fd !== undefined) closeSync(fd)
    },
  })
}

export class SnapshotStore {
  /** Opened at first use (an upload or a download), not at start: a host's start makes no object-store calls. */
  private opened: Promise<ObjectStore> | undefined

  private constructor(private readonly openObjects: () => Promise<ObjectStore>, private readonly kv: KV) {}

  private objects(): Promise<ObjectStore> {
    const opened = this.opened ?? this.openObjects()
    this.opened = opened
    // A failed opening is tried again at the next use.
    opened.catch(() => { if (this.opened === opened) this.opened = undefined })
    return opened
  }

  /**
   * Opens the bucket (and, at first use, the object store), creating them when no host has
   * yet (R3 on three or more NATS servers, else R1). Tried again until it
   * works: on a JetStream cluster that has just formed, a creation can time
   * out while it elects the new stream's leaders, and a replica that did not
   * start would never serve its units.
   */
  static async open(nc: NatsConnection, servers: number, timeoutMs: number, warn: (message: string, err: unknown) => void = () => undefined): Promise<SnapshotStore> {
    return untilItWorks(() => SnapshotStore.openOnce(nc, servers, timeoutMs), () => nc.isClosed(), Infinity,
      (attempt, err) => warn(`cluster: the snapshot store could not be opened (attempt ${attempt}); trying again`, err))
  }

  private static async openOnce(nc: NatsConnection, servers: number, timeoutMs: number): Promise<SnapshotStore> {
    const replicas = servers >= 3 ? 3 : 1
    // create() opens the store when it exists; two hosts creating it at once with the same configuration both succeed.
    const objects = (): Promise<ObjectStore> => withTimeout(new Objm(jetstream(nc, { timeout: timeoutMs })).create(SNAPSHOT_OBJECTS, { replicas, storage: StorageType.File }), 2 * timeoutMs, 'opening the snapshot object store')
    return new SnapshotStore(objects, await openBucket(nc, SNAPSHOT_BUCKET, replicas))
  }

  async index(unit: SnapshotUnit): Promise<SnapshotIndex> {
    const entry = await this.kv.get(indexKey(unit))
    if (entry === null || entry.operation !== 'PUT') return { snapshots: [], revision: entry?.revision }
    const parsed = entry.json<{ snapshots?: unknown }>()
    const snapshots = Array.isArray(parsed.snapshots) ? parsed.snapshots.filter(isInfo) : []
    return { snapshots, revision: entry.revision }
  }

  /** Stores `files` of `dir` as the object of the unit's snapshot at `sequence`; returns what the index lists of it. */
  async upload(unit: SnapshotUnit, sequence: number, dir: string, files: readonly string[]): Promise<Pick<SnapshotInfo, 'files' | 'sha256' | 'object'>> {
    const object = snapshotObject(unit, sequence)
    const hash = createHash('sha256')
    const sized: SnapshotFile[] = []
    // A put of a name that exists replaces it: what an upload that died half-way at the same sequence left goes.
    await (await this.objects()).put({ name: object, options: { max_chunk_size: CHUNK_BYTES } }, filesStream(dir, files, hash, sized))
    return { files: sized, sha256: hash.digest('hex'), object }
  }

  /** Writes the snapshot's files into `dir` (which exists), checking the object's digest and the checksum. */
  async download(unit: SnapshotUnit, info: SnapshotInfo, dir: string): Promise<void> {
    const got = await (await this.objects()).get(info.object)
    if (got === null) throw new Error(`snapshot ${unit}@${info.sequence}: its object ${info.object} is gone (dropped meanwhile)`)
    const hash = createHash('sha256')
    let fileIndex = 0
    let left = info.files[0]?.size ?? 0
    let fd = info.files.length === 0 ? undefined : openSync(join(dir, info.files[0]!.name), 'w', 0o600)
    const next = (): void => {
      // Files are back to back in the object; a chunk may end one file and start the next, and files may be empty.
      while (left === 0 && fd !== undefined) {
        closeSync(fd)
        fd = ++fileIndex < info.files.length ? openSync(join(dir, info.files[fileIndex]!.name), 'w', 0o600) : undefined
        left = info.files[fileIndex]?.size ?? 0
      }
    }
    try {
      for await (const chunk of got.data) {
        hash.update(chunk)
        let data = chunk
        while (data.length > 0) {
          next()
          if (fd === undefined) throw new Error(`snapshot ${unit}@${info.sequence}: more bytes than its files hold`)
          const n = Math.min(left, data.length)
          writeSync(fd, data, 0, n)
          left -= n
          data = data.subarray(n)
        }
      }
      const failed = await got.error
      if (failed !== null && failed !== undefined) throw failed
      next()
      if (fd !== undefined || left !== 0) throw new Error(`snapshot ${unit}@${info.sequence}: its object holds fewer bytes than its files`)
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

  /**
   * Deletes the unit's objects older than the newest kept snapshot that
   * `kept` does not list (dropped snapshots, and uploads never listed);
   * returns how many. A newer one may be another host's upload under way.
   */
  async dropUnlisted(unit: SnapshotUnit, kept: readonly SnapshotInfo[]): Promise<number> {
    const listed = new Set(kept.map((k) => k.object))
    const newest = Math.max(...kept.map((k) => k.sequence))
    let dropped = 0
    const objects = await this.objects()
    for (const o of await objects.list()) {
      const sequence = sequenceOf(unit, o.name)
      if (o.deleted || sequence === undefined || sequence >= newest || listed.has(o.name)) continue
      await objects.delete(o.name)
      dropped++
    }
    return dropped
  }
}

/** The stream sequence in the name of one of the unit's objects (snapshotObject); undefined for another unit's. */
function sequenceOf(unit: SnapshotUnit, name: string): number | undefined {
  const prefix = `${unit}.`
  if (!name.startsWith(prefix)) return undefined
  const rest = name.slice(prefix.length)
  return /^\d+$/.test(rest) ? Number(rest) : undefined
}
