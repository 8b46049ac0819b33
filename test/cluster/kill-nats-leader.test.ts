// Scenario: kill -9 of the NATS server leading the most streams under write
// load: writes resume and nothing acknowledged is lost. Needs the shard
// actors' replication (skipped while a test stands in for their leases).
import t from 'tap'
import { graphsThroughEveryHost } from './helpers/graphs'
import { busiestStreamLeader } from './helpers/nats-cluster'
import { clusterFile } from './helpers/leases'
import { allSequences, gaps, startWriteLoad, readBack } from './helpers/write-load'

const { skip, cluster, leases: clusterLeases } = clusterFile(t)

t.test('kill -9 of the NATS server leading the most streams', { skip }, async (t) => {
  await clusterLeases() // every shard has an owner
  const graphs = await graphsThroughEveryHost(cluster)
  const load = startWriteLoad(graphs, 4, 'natskill')
  await new Promise((r) => setTimeout(r, 2000))
  const busiest = await busiestStreamLeader(cluster.nats[0]!)
  t.ok(busiest !== undefined, `a stream leader found (${busiest?.name ?? 'none'}, ${busiest?.streams ?? 0} streams)`)
  const victim = cluster.nats.find((n) => n.name === busiest?.name) ?? cluster.nats[0]!
  const before = load.acknowledged.length
  const killedAt = Date.now()
  await victim.kill()
  const deadline = killedAt + 30_000
  while (!load.acknowledgedAt.some((at) => at > killedAt + 500) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  const resumedAt = load.acknowledgedAt.find((at) => at > killedAt + 500)
  t.ok(resumedAt !== undefined, `writes resumed ${resumedAt === undefined ? 'never' : `${resumedAt - killedAt} ms`} after the kill (${before} before)`)
  await new Promise((r) => setTimeout(r, 2000))
  await load.stop()
  t.comment(`other answers during the load: ${JSON.stringify([...load.others])}`)
  const missing: string[] = []
  // A read may meet 503s while a shard moves again after the NATS failover (seen for over 10 s once in CI, and
  // for 30-57 s once in a clean-clone CI run, 3 NATS servers, 2 hosts and the load on 2 cores): unavailable is
  // not lost, so the read-back waits up to 90 s, and says how long the shards were away.
  const readingFrom = Date.now()
  for (const id of load.acknowledged) {
    const status = await readBack(graphs[0]!, id, 90_000)
    if (status !== 200) missing.push(`${id}: ${status}`)
  }
  t.comment(`read-back of ${load.acknowledged.length} writes took ${Date.now() - readingFrom} ms`)
  t.same(missing.slice(0, 10), [], `every one of ${load.acknowledged.length} acknowledged writes is readable (${missing.length} not)`)
  t.same(gaps(await allSequences(graphs[0]!)), [], 'event sequences dense')
  await cluster.restartNats(victim)
})
