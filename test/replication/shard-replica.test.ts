// Two hosts' replicas of one shard against one local nats-server: the first
// claims the lease and writes, the second follows the stream into its own
// LMDB; when the first stops renewing, the second claims after a full lease
// period and serves; the first, whose clock says its lease is still valid (a
// paused process seen from inside), is fenced by the stream on its next write
// and stops serving, and nothing it tried is stored.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { ABORT, type Database } from 'lmdb'
import { connect } from '@nats-io/transport-node'
import { leaseBucket } from '../../src/replication/lease-bucket'
import { parseLease } from '../../src/replication/lease-map'
import { shardLeaseKey } from '../../src/contract/cluster-names'
import { closeShard, openShard, type ShardStore } from '../../workers/store/shard-store'
import type { Key } from '../../workers/store/keys'
import { ShardUnavailable } from '../../workers/store/unavailable'
import { Recorder, shardDatabases } from '../../workers/actor/replication/recorder'
import { ShardLog } from '../../workers/actor/replication/shard-log'
import { ShardReplica, type ReplicaHost } from '../../workers/actor/replication/shard-replica'
import { appliedSequence } from '../../workers/actor/replication/apply'
import { appendEvent, head, readEvents } from '../../workers/store/events'
import { natsServerAvailable, startNatsServer } from '../helpers/nats-server'
import { REPLICA_LEASE_MS, shardReplicas } from '../helpers/shard-replicas'
import { removeDir, tempDir } from '../helpers/server'
import { sleep, until } from '../../bench/wait'

const LEASE_MS = REPLICA_LEASE_MS
const nodes = (store: ShardStore): Database<unknown, Key> => shardDatabases(store).get('nodes')!

t.test('claim, follow, take over, fence', { skip: natsServerAvailable() ? false : 'nats-server not installed' }, async (t) => {
  const { kv, replicaOf: replicaWith } = await shardReplicas(t)
  const owned: Record<string, boolean> = {}
  const replicaOf = (node: string, now: () => number): ReturnType<typeof replicaWith> => replicaWith(node, { now, ownership: (_shard, isOwned) => { owned[node] = isOwned } })
  let aClock = 0
  let aFrozen = false
  const a = await replicaOf('a', () => (aFrozen ? aClock : (aClock = performance.now())))
  const b = await replicaOf('b', () => performance.now())
  const beat = { preferredHere: true, handOverTo: undefined }
  const notPreferred = { preferredHere: false, handOverTo: undefined }

  await a.replica.beat(beat)
  // a's last renewal is its claim (it never beats again): b counts a lease period from when it first saw it, after this.
  const renewedAt = performance.now()
  t.ok(a.replica.serves(), 'a claims the free lease and serves')
  t.equal(owned['a'], true, 'and tells its pool')
  await b.replica.beat(notPreferred)
  t.notOk(b.replica.serves(), 'b does not claim a lease held and renewed')

  t.equal(await a.replica.write(() => { nodes(a.store).putSync(['demo', 'n1'], { v: 1 }); return 'done' }, ABORT), 'done')
  t.same(nodes(a.store).get(['demo', 'n1']), { v: 1 }, 'committed on the owner after the append')
  await until('b to apply the write', () => nodes(b.store).get(['demo', 'n1']) !== undefined)
  t.equal(appliedSequence(b.store), appliedSequence(a.store), 'b applied up to the same sequence')

  // a stops renewing; by its own (frozen) clock its lease stays valid.
  aFrozen = true
  const stoppedAt = performance.now()
  while (!b.replica.serves()) {
    await b.replica.beat(notPreferred)
    await sleep(50)
    if (performance.now() - stoppedAt > 10_000) break
  }
  t.ok(b.replica.serves(), 'b claims the expired lease')
  t.ok(performance.now() - renewedAt >= LEASE_MS, `only after a full lease period without renewal (${Math.round(performance.now() - renewedAt)} ms)`)
  t.ok(a.replica.serves(), "a still believes it serves (its clock is stopped, as in a paused process)")

  const refused = await a.replica.write(() => { nodes(a.store).putSync(['demo', 'stale'], { v: 2 }); return 'done' }, ABORT).then(() => 'stored', (err: unknown) => err)
  t.ok(refused instanceof ShardUnavailable, "a's append is fenced: 503")
  t.notOk(a.replica.serves(), 'a stops serving')
  t.equal(owned['a'], false, 'and tells its pool')
  t.equal(nodes(a.store).get(['demo', 'stale']), undefined, 'nothing of the fenced batch in its LMDB')

  t.equal(await b.replica.write(() => { nodes(b.store).putSync(['demo', 'n2'], { v: 3 }); return 'done' }, ABORT), 'done', 'b writes')
  aFrozen = false
  await until('a to follow b', () => nodes(a.store).get(['demo', 'n2']) !== undefined)
  t.equal(nodes(b.store).get(['demo', 'stale']), undefined, 'the stream holds nothing of the fenced batch')
  t.equal(appliedSequence(a.store), appliedSequence(b.store), 'a, now a standby, is at the same sequence: the stream did not diverge')

  // A planned hand-over: b hands the lease to a, which claims it at its next beat though it is not the preferred host.
  await b.replica.release('a test hand-over', 'a')
  t.notOk(b.replica.serves(), 'b stops serving once it handed the lease over')
  t.equal(owned['b'], false, 'and tells its pool')
  t.equal(parseLease((await kv.get(shardLeaseKey(0)))!.string())?.handTo, 'a', 'the lease names a as the host it goes to')
  const handedAt = performance.now()
  while (!a.replica.serves() && performance.now() - handedAt < 5000) {
    await a.replica.beat(notPreferred)
    await sleep(20)
  }
  t.ok(a.replica.serves(), 'a claims the lease handed to it')
  t.ok(performance.now() - handedAt < LEASE_MS, `at once, not after a lease period (${Math.round(performance.now() - handedAt)} ms)`)
  t.equal(await a.replica.write(() => { nodes(a.store).putSync(['demo', 'n3'], { v: 4 }); return 'done' }, ABORT), 'done', 'a writes')
  await until('b to follow a', () => nodes(b.store).get(['demo', 'n3']) !== undefined)
})

t.test('a read on the owner while its batch is appended caches nothing stale: every event keeps its sequence', { skip: natsServerAvailable() ? false : 'nats-server not installed' }, async (t) => {
  const server = await startNatsServer()
  const nc = await connect({ servers: server.url })
  const kv = await leaseBucket(nc, 1)
  const dir = tempDir('replica-')
  const store = openShard(dir, 0, randomBytes(32))
  const host: ReplicaHost = {
    kv, nodeId: 'a', url: 'http://a', leaseMs: LEASE_MS, durability: 'local', now: () => performance.now(),
    ownership: () => undefined, destroyKeys: () => undefined, warn: () => undefined, info: () => undefined,
  }
  const replica = new ShardReplica(store, await ShardLog.open(nc, 0, 1, 2000), new Recorder(store, ABORT), host)
  t.teardown(async () => {
    await replica.close().catch(() => undefined)
    await closeShard(store)
    removeDir(dir)
    await nc.close()
    await server.stop()
  })
  await replica.start()
  await replica.beat({ preferredHere: true, handOverTo: undefined })
  t.ok(replica.serves(), 'the replica serves')
  const seen: number[] = []
  for (let i = 1; i <= 3; i++) {
    const sequence = await replica.write(() => {
      // Runs after the batch, before its append is acknowledged (so before LMDB commits it): a reader's event head.
      queueMicrotask(() => seen.push(head(store, 'demo').last))
      return appendEvent(store, 'demo', 'CREATE', 'core/customer', { id: `e${i}` }, undefined, i)
    }, ABORT)
    t.equal(sequence, i, `write ${i} appends event ${i}`)
  }
  t.same(seen, [0, 1, 2], 'each read saw the head before its batch')
  const read = readEvents(store, 'demo', 0, 10)
  t.same(read.kind === 'events' ? read.events.map((e) => (JSON.parse(e) as { payload: { id: string } }).payload.id) : read, ['e1', 'e2', 'e3'], 'no event was overwritten')
})

t.test("an owner's write is answered once LMDB synced it (local durability) or once committed (quorum); the next batch never waits for a sync", { skip: natsServerAvailable() ? false : 'nats-server not installed' }, async (t) => {
  for (const durability of ['local', 'quorum'] as const) {
    const server = await startNatsServer()
    const nc = await connect({ servers: server.url })
    const kv = await leaseBucket(nc, 1)
    const dir = tempDir('replica-')
    const store = openShard(dir, 0, randomBytes(32))
    // LMDB's sync, held back until the test lets it go (lmdb-js reads `flushed` per commit).
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    const realFlushed = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(store.env) as object, 'flushed') ?? Object.getOwnPropertyDescriptor(store.env, 'flushed')
    Object.defineProperty(store.env, 'flushed', { configurable: true, get: () => held })
    const host: ReplicaHost = {
      kv, nodeId: 'a', url: 'http://a', leaseMs: LEASE_MS, durability, now: () => performance.now(),
      ownership: () => undefined, destroyKeys: () => undefined, warn: () => undefined, info: () => undefined,
    }
    const replica = new ShardReplica(store, await ShardLog.open(nc, 0, 1, 2000), new Recorder(store, ABORT), host)
    await replica.start()
    // The claim entry waits for its sync (nothing answers it): let it through, then hold the syncs again.
    const claimed = replica.beat({ preferredHere: true, handOverTo: undefined })
    release()
    await claimed
    t.ok(replica.serves(), `${durability}: the replica serves`)
    let releaseWrites!: () => void
    const heldWrites = new Promise<void>((resolve) => { releaseWrites = resolve })
    Object.defineProperty(store.env, 'flushed', { configurable: true, get: () => heldWrites })
    const answered: number[] = []
    const writes = [1, 2, 3].map((i) => replica.write(() => { nodes(store).putSync(['demo', `n${i}`], { v: i }); return i }, ABORT).then((v) => { answered.push(v) }))
    await until(`${durability}: every batch committed while the syncs are held`, () => nodes(store).get(['demo', 'n3']) !== undefined)
    if (durability === 'local') {
      t.same(answered, [], 'local: no write answered before its sync')
      releaseWrites()
    }
    await Promise.all(writes)
    t.same(answered, [1, 2, 3], `${durability}: every write answered, in order`)
    releaseWrites()
    if (realFlushed !== undefined) Object.defineProperty(store.env, 'flushed', realFlushed)
    else delete (store.env as { flushed?: unknown }).flushed
    await replica.close().catch(() => undefined)
    await closeShard(store)
    removeDir(dir)
    await nc.close()
    await server.stop()
  }
})
