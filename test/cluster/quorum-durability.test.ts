// Scenario: --cluster-durability quorum, where an owner answers a write once
// the replicated stream took it and LMDB committed it, without waiting for
// LMDB's sync. A power loss of the owner then loses what its LMDB had not
// synced; the stream still holds it. Simulated: the owner's shard data.mdb is
// copied while the host is down (its state at that "sync"), writes go on and
// are acknowledged by it, then it is killed (-9) and the copy put back, as a
// power loss would leave the file. Restarted, it follows the stream from what
// that older file holds, takes the shard back, and every acknowledged write
// is read through it, with the event sequence dense.
import t from 'tap'
import { copyFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { shardOf } from '../../src/shards/tenant-hash'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile, ownerAndOther, SHARDS, type Leases } from './helpers/leases'
import type { Host } from './helpers/cluster'
import { allSequences, gaps, startWriteLoad, readBack } from './helpers/write-load'
import { sleep } from '../../bench/wait'

const { skip, cluster, leases: clusterLeases } = clusterFile(t, { args: ['--cluster-durability', 'quorum'] })

/** Until `host` owns demo's shard again (handed back once it is live a lease period and caught up). */
async function ownsAgain(leases: Leases, host: Host): Promise<boolean> {
  const by = Date.now() + 60_000
  while ((await leases.ownerOf('demo')).nodeId !== host.nodeId && Date.now() < by) await sleep(250)
  return (await leases.ownerOf('demo')).nodeId === host.nodeId
}

t.test('quorum durability: an owner whose LMDB lost its unsynced commits replays them from the stream', { skip }, async (t) => {
  const leases = await clusterLeases()
  const { owner, viaOwner, viaOther } = await ownerAndOther(cluster, leases, await graphsThroughEveryHost(cluster))
  const shardDir = join(owner.dataDir, 'data', 'shards', String(shardOf('demo', SHARDS)))
  const copy = join(cluster.dir, 'data.mdb.at-sync')
  t.teardown(() => rmSync(copy, { force: true }))

  const before = startWriteLoad([viaOther], 2, 'before')
  await sleep(1000)
  await before.stop()
  await owner.kill()
  copyFileSync(join(shardDir, 'data.mdb'), copy)
  await owner.restart()
  t.ok(await ownsAgain(leases, owner), 'the owner owns the shard again after a restart')

  const load = startWriteLoad([viaOther], 4, 'quorum')
  const acknowledgedBy = Date.now() + 20_000
  while (load.acknowledged.length < 200 && Date.now() < acknowledgedBy) await sleep(100)
  t.ok(load.acknowledged.length >= 200, `writes acknowledged by the owner after the copy (${load.acknowledged.length})`)
  await owner.kill()
  copyFileSync(copy, join(shardDir, 'data.mdb'))
  rmSync(join(shardDir, 'lock.mdb'), { force: true })
  await owner.restart()
  t.ok(await ownsAgain(leases, owner), 'the owner, its data.mdb put back, owns the shard again')
  await sleep(1000)
  await load.stop()
  t.comment(`other answers during the load: ${JSON.stringify([...load.others])}`)

  const missing: string[] = []
  for (const id of [...before.acknowledged, ...load.acknowledged]) {
    const status = await readBack(viaOwner, id)
    if (status !== 200) missing.push(`${id}: ${status}`)
  }
  t.same(missing.slice(0, 10), [], `every one of ${before.acknowledged.length + load.acknowledged.length} acknowledged writes is read through the owner (${missing.length} not)`)
  const sequences = await allSequences(viaOwner)
  t.same(gaps(sequences), [], `event sequences dense (${sequences.length} events)`)
  t.same(sequences, await allSequences(viaOther), 'the same sequence through the other host')
})
