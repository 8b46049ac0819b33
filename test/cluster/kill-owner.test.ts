// Scenario: kill -9 of the host owning the shard under write load, twice.
// Service resumes within the lease period + 2 s (the survivor serves the
// shard within two lease periods + 2 s), every acknowledged write is readable
// afterwards, and the tenant's event sequences stay dense. Needs the shard
// actors' own leases and replication (skipped while a test stands in for them).
import t from 'tap'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile, ownerAndOther } from './helpers/leases'
import { allSequences, gaps, startWriteLoad, readBack } from './helpers/write-load'
import { sleep } from '../../bench/wait'
import { recoveryLimitMs, servedEverywhereAfter } from './helpers/recovery'

const { skip, cluster, leases: clusterLeases } = clusterFile(t)

// Twice: the second round kills the owner again once the first victim, restarted, has its shards back.
for (const round of [1, 2]) t.test(`kill -9 of the owner under write load (round ${round})`, { skip }, async (t) => {
  const leases = await clusterLeases()
  if (round > 1) await leases.placed()
  const { owner, viaOther: viaSurvivor } = await ownerAndOther(cluster, leases, await graphsThroughEveryHost(cluster))
  const load = startWriteLoad([viaSurvivor], 4, `kill${round}`)
  await sleep(2000)
  t.ok(load.acknowledged.length > 0, `writes acknowledged before the kill (${load.acknowledged.length})`)
  const killedAt = Date.now()
  await owner.kill()
  const recovered = await servedEverywhereAfter([viaSurvivor], killedAt, recoveryLimitMs(cluster.leaseMs))
  t.ok(recovered.within, `the survivor serves the shard ${recovered.ms ?? 'never'} ms after the kill (limit ${recoveryLimitMs(cluster.leaseMs)} ms)`)
  const limit = killedAt + cluster.leaseMs + 2000
  while (!load.acknowledgedAt.some((at) => at > killedAt + 100) && Date.now() < limit + 5000) await sleep(50)
  const resumedAt = load.acknowledgedAt.find((at) => at > killedAt + 100)
  t.ok(resumedAt !== undefined && resumedAt <= limit, `writes resumed ${resumedAt === undefined ? 'never' : `${resumedAt - killedAt} ms`} after the kill (limit ${cluster.leaseMs + 2000} ms)`)
  await sleep(2000)
  await load.stop()
  t.comment(`other answers during the load: ${JSON.stringify([...load.others])}`)
  let missing = 0
  for (const id of load.acknowledged) if ((await readBack(viaSurvivor, id)) !== 200) missing++
  t.equal(missing, 0, `every one of ${load.acknowledged.length} acknowledged writes is readable`)
  const sequences = await allSequences(viaSurvivor)
  t.same(gaps(sequences), [], `event sequences dense (${sequences.length} events)`)
  await owner.restart()
})
