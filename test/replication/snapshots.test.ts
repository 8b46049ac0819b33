// Shard snapshots against one local nats-server (docs/design/replication.md,
// "Snapshots"): the owner's snapshot holds its applied sequence and purges
// the stream below it; a host with an empty data directory restores it and
// follows the rest of the stream; a standby the purge passed restores over
// what it had. A revoked consent's key, still in the owner's key file when
// the snapshot is copied, is not in the snapshot.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { ABORT, type Database } from 'lmdb'
import { connect } from '@nats-io/transport-node'
import { leaseBucket } from '../../src/replication/lease-bucket'
import { closeShard, openShard, type ShardStore } from '../../workers/store/shard-store'
import type { Key } from '../../workers/store/keys'
import { Recorder, shardDatabases } from '../../workers/actor/replication/recorder'
import { ShardLog } from '../../workers/actor/replication/shard-log'
import { ShardReplica, type ReplicaHost } from '../../workers/actor/replication/shard-replica'
import { SnapshotStore } from '../../src/replication/snapshot-store'
import { Snapshots } from '../../src/replication/snapshots'
import { shardSnapshotSource } from '../../workers/actor/replication/snapshot-files'
import { appliedSequence, grantSequence, grantsToErase } from '../../workers/actor/replication/apply'
import { natsServerAvailable, startNatsServer } from '../helpers/nats-server'
import { removeDir, tempDir } from '../helpers/server'
import { until } from '../../bench/wait'

const LEASE_MS = 1000
const db = (store: ShardStore, name: string): Database<unknown, Key> => shardDatabases(store).get(name)!

t.test('snapshot, purge, restore on an empty host and on a standby the purge passed', { skip: natsServerAvailable() ? false : 'nats-server not installed' }, async (t) => {
  const server = await startNatsServer()
  const nc = await connect({ servers: server.url })
  const kv = await leaseBucket(nc, 1)
  const snapshotStore = await SnapshotStore.open(nc, 1, 2000)
  const masterKey = randomBytes(32)
  const made: { store: ShardStore; dir: string; replicas: ShardReplica[] }[] = []
  t.teardown(async () => {
    for (const m of made) {
      for (const r of m.replicas) await r.close().catch(() => undefined)
      await closeShard(m.store)
      removeDir(m.dir)
    }
    await nc.close()
    await server.stop()
  })
  const destroyed: Record<string, number[]> = {}
  const infos: string[] = []
  // SNAP_DEBUG=1 prints what the replicas said (why a restore failed, what was purged).
  t.teardown(() => { if (process.env['SNAP_DEBUG'] !== undefined) console.error(infos.join('\n')) })
  interface On { store: ShardStore; replica: ShardReplica; snapshots: Snapshots; keeping(keep: number): Snapshots }
  async function replicaOn(node: string, made0: { store: ShardStore; dir: string; replicas: ShardReplica[] } | undefined): Promise<On> {
    const m = made0 ?? { dir: tempDir('snapshot-'), store: undefined as unknown as ShardStore, replicas: [] }
    if (made0 === undefined) {
      m.store = openShard(m.dir, 0, masterKey)
      made.push(m)
    }
    const host: ReplicaHost = {
      kv, nodeId: node, url: `http://${node}`, leaseMs: LEASE_MS, durability: 'local', now: () => performance.now(),
      ownership: () => undefined,
      destroyKeys: (store, slots) => { (destroyed[node] ??= []).push(...slots); for (const s of slots) store.keys.destroy(s) },
      warn: (message, err?: unknown) => infos.push(`${node}: ${message}${err === undefined ? '' : ` ${String(err)}`}`), info: (message) => infos.push(`${node}: ${message}`),
    }
    const log = await ShardLog.open(nc, 0, 1, 2000)
    const recorder = new Recorder(m.store, ABORT)
    // Thresholds out of reach: the test takes its snapshots itself.
    const keeping = (keep: number): Snapshots => new Snapshots(shardSnapshotSource(m.store, recorder), log, snapshotStore, { everyEntries: 1e9, everyMs: 1e9, keep }, host)
    const snapshots = keeping(2)
    const replica = new ShardReplica(m.store, log, recorder, host, snapshots)
    await replica.start()
    m.replicas.push(replica)
    return { store: m.store, replica, snapshots, keeping }
  }

  const a = await replicaOn('a', undefined)
  const b = await replicaOn('b', undefined)
  await a.replica.beat({ preferredHere: true, handOverTo: undefined })
  t.ok(a.replica.serves(), 'a owns the shard')
  const write = (id: string): Promise<unknown> => a.replica.write(() => db(a.store, 'nodes').putSync(['demo', id], { id }), ABORT)
  for (let i = 0; i < 5; i++) await write(`n${i}`)
  // Slot 1: a granted consent's key. Slot 0: a consent revoked whose slot a has not destroyed yet (the race the snapshot closes).
  // Real keys wrapped by the hosts' wrapping key: every host checks that a replicated key grant opens before it applies it.
  let key0: Buffer = Buffer.alloc(0)
  let key1: Buffer = Buffer.alloc(0)
  await a.replica.write(() => {
    a.store.keys.create(0)
    a.store.keys.create(1)
    key0 = a.store.keyFile.read(0)!
    key1 = a.store.keyFile.read(1)!
    db(a.store, 'consents').putSync(['demo', 'c0'], { status: 'granted', slot: 0 })
    db(a.store, 'consents').putSync(['demo', 'c1'], { status: 'granted', slot: 1 })
  }, ABORT)
  await until('b to apply the key slots', () => b.store.keyFile.read(0) !== undefined && appliedSequence(b.store) === appliedSequence(a.store))
  // b stops following before the revocation: it will come back behind the purge, holding slot 0's key.
  const bMade = made[1]!
  await b.replica.close()
  const bApplied = appliedSequence(b.store)
  await a.replica.write(() => db(a.store, 'consents').putSync(['demo', 'c0'], { status: 'revoked', slot: 0 }), ABORT)
  t.equal(a.store.keyFile.read(0), undefined, 'a destroyed slot 0 after the commit')
  // The race the snapshot closes: the revocation committed, its slot not destroyed yet when the key file is copied.
  a.store.keyFile.write(0, key0)

  const log = await ShardLog.open(nc, 0, 1, 2000)
  const first = await a.snapshots.take(1, () => a.replica.serves())
  t.ok(first !== undefined, 'a snapshot was taken')
  t.equal(first!.sequence, appliedSequence(a.store), 'it holds the sequence a applied')
  t.same(await log.bounds(), { first: first!.sequence + 1, last: first!.sequence }, 'the stream is purged below it (every entry is in the snapshot)')

  for (let i = 5; i < 8; i++) await write(`n${i}`)
  const last = appliedSequence(a.store)

  const c = await replicaOn('c', undefined)
  await until('c to restore and follow', () => appliedSequence(c.store) === last)
  for (let i = 0; i < 8; i++) t.same(db(c.store, 'nodes').get(['demo', `n${i}`]), { id: `n${i}` }, `c holds n${i}`)
  t.same(db(c.store, 'consents').get(['demo', 'c0']), { status: 'revoked', slot: 0 }, 'c holds the revocation')
  t.equal(c.store.keyFile.read(0), undefined, "the revoked consent's key is not in the snapshot")
  t.same(c.store.keyFile.read(1), key1, "the granted consent's key is")
  t.equal(destroyed['c'], undefined, 'c had no key to destroy')
  t.ok(infos.some((l) => /c: cluster: shard 0: restored the snapshot/.test(l)), 'c says it restored')

  t.ok(bApplied < first!.sequence, `b (at ${bApplied}) is behind the purge`)
  const b2 = await replicaOn('b', bMade)
  await until('b to restore and catch up', () => appliedSequence(b2.store) === last)
  for (let i = 0; i < 8; i++) t.same(db(b2.store, 'nodes').get(['demo', `n${i}`]), { id: `n${i}` }, `b holds n${i}`)
  t.same(destroyed['b'], [0], 'b destroys the key the restored records say is revoked (shred log first)')
  t.equal(b2.store.keyFile.read(0), undefined, 'slot 0 is zeroed on b')
  t.same(b2.store.keyFile.read(1), key1, 'slot 1 kept on b')

  await write('n8')
  await write('n9')
  const second = await a.keeping(1).take(1, () => a.replica.serves())
  t.ok(second !== undefined, `a second snapshot at ${second?.sequence}`)
  t.equal((await log.bounds()).first, second!.sequence + 1, 'keeping one, the stream is purged below the newest')
  t.equal((await snapshotStore.index(0)).snapshots.length, 1, 'one snapshot listed')
  await write('n10')
  await until('b and c to follow', () => appliedSequence(b2.store) === appliedSequence(a.store) && appliedSequence(c.store) === appliedSequence(a.store))
  for (const store of [b2.store, c.store]) t.same(db(store, 'nodes').get(['demo', 'n10']), { id: 'n10' }, 'followed past the second snapshot')

  // An erased key grant leaves a hole in the stream that following standbys skip: it is no purge, so no restore.
  const saidBefore = infos.length
  await a.replica.write(() => {
    a.store.keys.create(2)
    db(a.store, 'consents').putSync(['demo', 'c2'], { status: 'granted', slot: 2 })
  }, ABORT)
  const grant2 = grantSequence(a.store, 2)
  t.ok(grant2 !== undefined, `slot 2's key crossed as a grant message (${grant2})`)
  await a.replica.write(() => db(a.store, 'consents').putSync(['demo', 'c2'], { status: 'revoked', slot: 2 }), ABORT)
  t.same(grantsToErase(a.store), [], 'the grant message was erased before the revocation was answered')
  await write('n11')
  await until('b and c to follow past the erased grant', () => appliedSequence(b2.store) === appliedSequence(a.store) && appliedSequence(c.store) === appliedSequence(a.store))
  for (const store of [b2.store, c.store]) {
    t.same(db(store, 'nodes').get(['demo', 'n11']), { id: 'n11' }, 'followed past the erased grant')
    t.equal(store.keyFile.read(2), undefined, "the revoked consent's key is destroyed")
  }
  t.notOk(infos.slice(saidBefore).some((l) => /restor/.test(l)), 'no snapshot restored for the hole an erased grant leaves')
})
