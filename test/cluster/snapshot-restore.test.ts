// Scenario: snapshots and purging (docs/design/replication.md, "Snapshots"). Under write
// load with a small snapshot threshold, the owner of tenant demo's shard
// snapshots it and the shard's stream is purged (its first sequence moves).
// Then that host is killed and its data directory wiped; the survivor takes
// the shard over while the load goes on through it. The wiped host starts
// again empty, restores the snapshot and follows the stream's tail, and the
// shard (which prefers it) is handed back to it. Read through it, every
// acknowledged write is there and the event sequence is dense. The auth
// store is snapshotted the same way: tokens issued before the kill make its
// owner snapshot it and purge its stream, and the wiped host restores it too.
//
// The host killed is demo's owner, which the test requires not to be the
// auth owner (host1, the first to start): the auth store then has a survivor
// whose stream the wiped host must restore from, not replay.
import t from 'tap'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { AUTH_STREAM, SNAPSHOT_BUCKET, shardStream } from '../../src/contract/cluster-names'
import { Graph } from '../helpers/client'
import { getToken } from '../helpers/server'
import { shardOf } from '../../src/shards/tenant-hash'
import { Kvm } from '@nats-io/kv'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile, ownerAndOther, SHARDS } from './helpers/leases'
import { allSequences, gaps, startWriteLoad, readBack } from './helpers/write-load'
import { sleep } from '../../bench/wait'

const SNAPSHOT_ENTRIES = 40
const { skip, cluster, leases: clusterLeases } = clusterFile(t, { args: ['--snapshot-entries', String(SNAPSHOT_ENTRIES), '--snapshots-kept', '2'] })

t.test('a wiped host restores from a snapshot and the stream tail, and serves every acknowledged write', { skip }, async (t) => {
  const leases = await clusterLeases()
  const { owner, viaOwner, viaOther: viaSurvivor } = await ownerAndOther(cluster, leases, await graphsThroughEveryHost(cluster))
  t.not(owner.nodeId, 'host1', 'the owner is not the host holding the auth lease')
  const stream = shardStream(shardOf('demo', SHARDS))
  const jsm = await jetstreamManager(leases.nc)
  const snapshots = await new Kvm(leases.nc).open(SNAPSHOT_BUCKET)

  const load = startWriteLoad([viaSurvivor], 4, 'snap')
  // Until the owner has snapshotted (with the load's batches, a few seconds) and purged the stream.
  const until = Date.now() + 60_000
  let first = 1
  while (Date.now() < until) {
    first = (await jsm.streams.info(stream)).state.first_seq
    if (first > 1) break
    await sleep(250)
  }
  t.ok(first > 1, `the stream of demo's shard was purged below a snapshot (first sequence ${first})`)
  const index = await snapshots.get(`shard.${shardOf('demo', SHARDS)}`)
  const listed = index?.json<{ snapshots: { sequence: number; node: string }[] }>().snapshots ?? []
  t.ok(listed.length > 0 && listed.every((s) => s.node === owner.nodeId), `snapshots listed by the owner: ${JSON.stringify(listed.map((s) => s.sequence))}`)

  // Tokens through the auth owner: one auth batch each, past the threshold.
  const authOwner = cluster.hosts.find((h) => h !== owner)!
  const tokens = []
  for (let i = 0; i < SNAPSHOT_ENTRIES + 10; i++) tokens.push(await getToken(authOwner.url))
  const authPurgedBy = Date.now() + 30_000
  let authFirst = 1
  while (authFirst <= 1 && Date.now() < authPurgedBy) {
    authFirst = (await jsm.streams.info(AUTH_STREAM)).state.first_seq
    await sleep(250)
  }
  t.ok(authFirst > 1, `the auth store's stream was purged below its snapshot (first sequence ${authFirst})`)

  await owner.kill()
  rmSync(join(owner.dataDir, 'data'), { recursive: true, force: true })
  // The survivor takes the shard over; the load goes on through it.
  await sleep(cluster.leaseMs + 2000)
  const duringOutage = load.acknowledged.length
  await owner.restart()
  // Handed back once the restarted host is live a full lease period and has caught up (at least two lease periods after the takeover).
  const backBy = Date.now() + 60_000
  while ((await leases.ownerOf('demo')).nodeId !== owner.nodeId && Date.now() < backBy) await sleep(250)
  t.equal((await leases.ownerOf('demo')).nodeId, owner.nodeId, 'the wiped host owns the shard again')
  await sleep(1000)
  await load.stop()
  t.ok(load.acknowledged.length > duringOutage, `writes acknowledged after the restart too (${load.acknowledged.length - duringOutage})`)
  const restartOutput = owner.output()
  t.match(restartOutput, new RegExp(`shard ${shardOf('demo', SHARDS)}: restored the snapshot at stream sequence \\d+`), 'it restored a snapshot of the shard')
  t.match(restartOutput, /the auth store: restored the snapshot at stream sequence \d+/, 'and one of the auth store')
  const checked = await Promise.all(tokens.slice(0, 5).map((token) => new Graph(viaOwner.base, 'demo', token, viaOwner.consent).get('nodes/core/customer?limit=1').then((r) => r.status)))
  t.same(checked, [200, 200, 200, 200, 200], 'tokens issued before the wipe are accepted through the restored host')
  t.comment(`other answers during the load: ${JSON.stringify([...load.others])}`)

  const missing: string[] = []
  for (const id of load.acknowledged) {
    const status = await readBack(viaOwner, id)
    if (status !== 200) missing.push(`${id}: ${status}`)
  }
  t.same(missing.slice(0, 10), [], `every one of ${load.acknowledged.length} acknowledged writes is read through the restored host (${missing.length} not)`)
  const sequences = await allSequences(viaOwner)
  t.same(gaps(sequences), [], `event sequences dense (${sequences.length} events)`)
  t.same(sequences, await allSequences(viaSurvivor), 'the same sequence through the other host')
})
