// Scenario: planned hand-overs under write load. The owner of the tenant's
// shard stops cleanly (it hands the shard over), then starts again and, once
// its follow report says it has caught up with the stream, gets the shard
// back (placement prefers it). Writes through the other host go on all
// along: no answer but 204, every acknowledged write readable, event
// sequences dense. Then the owner is killed (kill -9) and restarted, and
// killed again and restarted with its data directory wiped: from each
// restart on, no answer but 204 through either host, and the shards are
// placed again within two lease periods (and a margin for a loaded machine).
import t from 'tap'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile, ownerAndOther } from './helpers/leases'
import { allSequences, gaps, readBack, startWriteLoad } from './helpers/write-load'
import { sleep } from '../../bench/wait'
import { shardOf } from '../../src/shards/tenant-hash'
import { SHARDS } from './helpers/leases'
import { clusterLines } from './helpers/recovery'
import type { WriteLoad } from './helpers/write-load'
import type { Host } from './helpers/cluster'

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

/** The load's answers other than 204 since `before` (a copy of its counts then). */
function othersSince(load: WriteLoad, before: ReadonlyMap<number, number>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [status, n] of load.others) if (n > (before.get(status) ?? 0)) out[status] = n - (before.get(status) ?? 0)
  return out
}

/** Seconds of margin over two lease periods for placement to settle after a rejoin: the machine may be loaded. */
const SETTLE_MARGIN_MS = 4000

t.test('a host rejoining after kill -9, and after its data directory was wiped, gets its shards back with no 503', { skip }, async (t) => {
  const leases = await clusterLeases()
  const graphs = await graphsThroughEveryHost(cluster)
  const { owner, other, viaOther } = await ownerAndOther(cluster, leases, graphs)
  const shard = shardOf('demo', SHARDS)
  const settleLimit = 2 * cluster.leaseMs + SETTLE_MARGIN_MS
  // Writes through both hosts: through the victim too once it is back (while it is down they fail, before the counts that matter).
  const load = startWriteLoad(graphs, 16, 'rejoin')
  const loadStarted = Date.now()
  const rejoin = async (victim: Host, how: string, wipe: boolean): Promise<void> => {
    await sleep(1500)
    t.comment(`+${Date.now() - loadStarted} ms: ${victim.nodeId} killed${wipe ? ', its data directory wiped' : ''}`)
    await victim.kill()
    if (wipe) rmSync(join(victim.dataDir, 'data'), { recursive: true, force: true })
    const deadline = Date.now() + 30_000
    while ((await leases.owners().catch(() => []))[shard] !== other.nodeId && Date.now() < deadline) await sleep(100)
    await sleep(1000)
    await victim.restart()
    const back = Date.now()
    const before = new Map(load.others)
    t.comment(`+${back - loadStarted} ms: ${victim.nodeId} listens again`)
    await leases.placed()
    const settled = Date.now() - back
    t.ok(settled <= settleLimit, `${how}: placement settled ${settled} ms after the return (at most ${settleLimit})`)
    await sleep(1500)
    const since = othersSince(load, before)
    t.same(since, {}, `${how}: no answer but 204 from the return on`)
    const lines = clusterLines([victim, other], back - 5000)
    t.comment((Object.keys(since).length > 0 || settled > settleLimit ? lines : lines.filter((l) => /handed it|serves it|waits to hand/.test(l))).join('\n'))
  }
  try {
    await rejoin(owner, 'killed and restarted', false)
    await rejoin(owner, 'killed, wiped and restarted', true)
  } finally {
    // A rejoin that failed must not leave the writers running: they would keep the test process alive.
    await load.stop()
  }
  t.ok(load.acknowledged.length > 100, `writes went on (${load.acknowledged.length} acknowledged)`)
  let missing = 0
  for (const id of load.acknowledged) if ((await readBack(viaOther, id)) !== 200) missing++
  t.equal(missing, 0, 'every acknowledged write is readable')
  t.same(gaps(await allSequences(viaOther)), [], 'event sequences dense')
  t.same(gaps(await allSequences(graphs[cluster.hosts.indexOf(owner)]!)), [], 'event sequences dense through the rejoined host')
})
