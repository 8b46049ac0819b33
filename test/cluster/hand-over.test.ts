// Scenario: planned hand-overs under write load. The owner of the tenant's
// shard stops cleanly (it hands the shard over), then starts again and, once
// it has been live a lease period, gets the shard back (placement prefers
// it). Writes through the other host go on all along: no answer but 204,
// every acknowledged write readable, event sequences dense.
import t from 'tap'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile, ownerAndOther } from './helpers/leases'
import { allSequences, gaps, readBack, startWriteLoad } from './helpers/write-load'
import { sleep } from '../../bench/wait'
import { shardOf } from '../../src/shards/tenant-hash'
import { SHARDS } from './helpers/leases'
import { clusterLines } from './helpers/recovery'

const { skip, cluster, leases: clusterLeases } = clusterFile(t)

t.test('a shard handed over and back under write load answers no 503', { skip }, async (t) => {
  const leases = await clusterLeases()
  const { owner, other, viaOther } = await ownerAndOther(cluster, leases, await graphsThroughEveryHost(cluster))
  const shard = shardOf('demo', SHARDS)
  const ownerNow = async (): Promise<string | undefined> => (await leases.owners().catch(() => []))[shard]
  const until = async (node: string, what: string): Promise<void> => {
    const deadline = Date.now() + 30_000
    while ((await ownerNow()) !== node && Date.now() < deadline) await sleep(100)
    t.equal(await ownerNow(), node, what)
  }
  const load = startWriteLoad([viaOther], 16, 'handover')
  const loadStarted = Date.now()
  await sleep(1500)
  t.comment(`+${Date.now() - loadStarted} ms: ${owner.nodeId} stops`)
  await owner.stop()
  const stoppedLines = clusterLines([owner], loadStarted)
  await until(other.nodeId, `${other.nodeId} took the shard over from ${owner.nodeId}, which stopped`)
  await sleep(1000)
  t.comment(`+${Date.now() - loadStarted} ms: ${owner.nodeId} starts again`)
  await owner.restart()
  await until(owner.nodeId, `${owner.nodeId}, started again, got the shard back`)
  await sleep(1500)
  await load.stop()
  t.ok(load.acknowledged.length > 100, `writes went on (${load.acknowledged.length} acknowledged)`)
  t.same(Object.fromEntries(load.others), {}, 'no answer but 204 through either hand-over')
  if (load.samples.length > 0) t.comment([...load.samples, ...stoppedLines, ...clusterLines([owner, other], loadStarted)].join('\n'))
  let missing = 0
  for (const id of load.acknowledged) if ((await readBack(viaOther, id)) !== 200) missing++
  t.equal(missing, 0, 'every acknowledged write is readable')
  t.same(gaps(await allSequences(viaOther)), [], 'event sequences dense')
})
