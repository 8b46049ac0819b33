// Scenario: the owner is paused (SIGSTOP) past its lease under write load, twice.
// Another host takes over; when the paused one resumes it is fenced: it does
// not serve the shard from its stale copy, every acknowledged write is read
// back through both hosts, and both see the same dense event sequence (the
// stream did not diverge). Needs the shard actors' leases and replication
// (skipped while a test stands in for them).
import t from 'tap'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile, ownerAndOther } from './helpers/leases'
import { allSequences, gaps, startWriteLoad, readBack } from './helpers/write-load'
import { sleep } from '../../bench/wait'
import { recoveryLimitMs, servedEverywhereAfter } from './helpers/recovery'

const { skip, cluster, leases: clusterLeases } = clusterFile(t)

// Twice: the second round pauses the owner again once the shards are placed as the rule says.
for (const round of [1, 2]) t.test(`a paused owner is fenced on resume (round ${round})`, { skip }, async (t) => {
  const leases = await clusterLeases()
  if (round > 1) await leases.placed()
  const { owner, other: survivor, viaOwner, viaOther: viaSurvivor } = await ownerAndOther(cluster, leases, await graphsThroughEveryHost(cluster))
  const load = startWriteLoad([viaSurvivor], 4, `pause${round}`)
  await sleep(1500)
  const pausedAt = Date.now()
  owner.pause()
  const taken = await servedEverywhereAfter([viaSurvivor], pausedAt, recoveryLimitMs(cluster.leaseMs))
  t.ok(taken.within, `the survivor serves the shard ${taken.ms ?? 'never'} ms after the pause (limit ${recoveryLimitMs(cluster.leaseMs)} ms)`)
  await sleep(Math.max(0, pausedAt + cluster.leaseMs + 2000 - Date.now()))
  const resumedWrites = load.acknowledgedAt.filter((at) => at > pausedAt + cluster.leaseMs).length
  t.ok(resumedWrites > 0, `writes went on through the survivor while the owner was paused (${resumedWrites})`)
  t.equal((await leases.ownerOf('demo')).nodeId, survivor.nodeId, 'the survivor holds the lease')
  const resumedAt = Date.now()
  owner.resume()
  const back = await servedEverywhereAfter([viaOwner, viaSurvivor], resumedAt, recoveryLimitMs(cluster.leaseMs))
  t.ok(back.within, `both hosts serve the shard ${back.ms ?? 'never'} ms after SIGCONT (limit ${recoveryLimitMs(cluster.leaseMs)} ms)`)
  await sleep(2000)
  await load.stop()
  // Taken now: the read-back below logs thousands of access lines, and the helper keeps only the output's tail.
  const resumedOutput = owner.output()
  t.comment(`other answers during the load: ${JSON.stringify([...load.others])}`)
  const missing: string[] = []
  for (const id of load.acknowledged) {
    for (const [name, g] of [['paused', viaOwner], ['survivor', viaSurvivor]] as const) {
      const status = await readBack(g, id)
      if (status !== 200) missing.push(`${id} through the ${name}: ${status}`)
    }
  }
  t.same(missing.slice(0, 10), [], `every one of ${load.acknowledged.length} acknowledged writes is read through both hosts (${missing.length} not)`)
  // Only what it logged since this round's pause: a second round may pause the same host.
  const stoppedServing = resumedOutput.split('\n').filter((line) => Number(/"time":(\d+)/.exec(line)?.[1] ?? 0) >= pausedAt)
    .some((line) => new RegExp(`shard \\d+: ${owner.nodeId} no longer serves it`).test(line))
  t.ok(stoppedServing, 'the paused host stopped serving on resume (its lease ran out, or its append was fenced)')
  const [a, b] = [await allSequences(viaOwner), await allSequences(viaSurvivor)]
  t.same(gaps(b), [], 'event sequences dense')
  t.same(a, b, 'both hosts see the same event sequence')
})
