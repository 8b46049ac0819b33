// Scenario: a host cut off from NATS stops answering for its shards within
// the lease period (503 with Retry-After, never data it can no longer know to
// be current), and serves again once it can reach NATS.
import t from 'tap'
import type { Graph } from '../helpers/client'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile } from './helpers/leases'
import { sleep } from '../../bench/wait'

const { skip, cluster, leases: clusterLeases } = clusterFile(t)

/** Polls `path` through `g` until `done(status)`, at most `ms`; the statuses seen, in order. */
async function pollUntil(g: Graph, path: string, ms: number, done: (status: number) => boolean): Promise<{ statuses: number[]; elapsed: number; last: Awaited<ReturnType<Graph['get']>> }> {
  const t0 = Date.now()
  const statuses: number[] = []
  for (;;) {
    const res = await g.get(path)
    statuses.push(res.status)
    if (done(res.status) || Date.now() - t0 > ms) return { statuses, elapsed: Date.now() - t0, last: res }
    await sleep(100)
  }
}

t.test('a host cut off from NATS stops answering for its shards within the lease period', { skip }, async (t) => {
  const leases = await clusterLeases()
  const owner = await leases.ownerOf('demo')
  const viaOwner = (await graphsThroughEveryHost(cluster))[cluster.hosts.indexOf(owner)]!
  t.equal((await viaOwner.put('nodes/core/customer/cut1', { v: 1 })).status, 204)
  cluster.cutOff(owner)
  const cut = Date.now()
  const seen = await pollUntil(viaOwner, 'nodes/core/customer/cut1', cluster.leaseMs + 5000, (s) => s === 503)
  t.equal(seen.last.status, 503, `503 after ${seen.elapsed} ms (statuses ${[...new Set(seen.statuses)].join(', ')})`)
  t.ok(Date.now() - cut <= cluster.leaseMs + 1000, 'within the lease period (and a second of polling)')
  t.equal(seen.last.headers['retry-after'], String(Math.ceil(cluster.leaseMs / 1000)), 'Retry-After: one lease period')
  t.notOk(seen.statuses.slice(seen.statuses.indexOf(503)).some((s) => s === 200), 'no data once it stopped')
  let ready = await fetch(`${owner.url}/health/ready`)
  while (ready.status === 200 && Date.now() - cut < cluster.leaseMs + 2000) {
    await ready.text()
    await sleep(200)
    ready = await fetch(`${owner.url}/health/ready`)
  }
  t.equal(ready.status, 503, `not ready within the lease period + 2 s of being cut off (${Date.now() - cut} ms)`)
  t.match(await ready.text(), /"failing":\["cluster"\]/, 'the failing check is named')
  cluster.reconnect(owner)
  const back = await pollUntil(viaOwner, 'nodes/core/customer/cut1', 30_000, (s) => s === 200)
  t.equal(back.last.status, 200, `serves again after reconnecting (${back.elapsed} ms)`)
})
