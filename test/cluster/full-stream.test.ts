// Scenario: a full stream gives clean 503s. The NATS servers get a small
// JetStream store (8 MB each); large writes fill it. Every write is either
// acknowledged (204) or refused with 503 and Retry-After, never a 500 or a
// dropped connection; every acknowledged write stays readable (the leases, in
// memory, are still renewed, so the shards keep their owners) and the hosts
// stay live. Needs the shard actors' replication (skipped while a test stands
// in for their leases).
import t from 'tap'
import { graphsThroughEveryHost } from './helpers/graphs'
import { readBack } from './helpers/write-load'
import { clusterFile } from './helpers/leases'

const { skip, cluster, leases: clusterLeases } = clusterFile(t, { maxFileStore: '8MB' })

t.test('writes into a full stream answer 503 cleanly', { skip }, async (t) => {
  await clusterLeases() // every shard has an owner
  const [g] = await graphsThroughEveryHost(cluster)
  const filler = 'x'.repeat(100_000)
  const acknowledged: string[] = []
  const refused: { status: number; retryAfter: unknown }[] = []
  for (let i = 0; i < 400 && refused.length < 5; i++) {
    const res = await g!.put(`nodes/core/customer/full${i}`, { filler })
    if (res.status === 204) acknowledged.push(`full${i}`)
    else refused.push({ status: res.status, retryAfter: res.headers['retry-after'] })
  }
  t.ok(refused.length > 0, `the store filled after ${acknowledged.length} writes`)
  t.same(refused.filter((r) => r.status !== 503 || r.retryAfter === undefined), [], 'every refusal is a 503 with Retry-After')
  const unreadable: { id: string; status: number }[] = []
  for (const id of acknowledged) {
    const status = await readBack(g!, id)
    if (status !== 200) unreadable.push({ id, status })
  }
  t.same(unreadable, [], 'every acknowledged write is readable')
  for (const host of cluster.hosts) t.equal((await fetch(`${host.url}/health/live`)).status, 200, `${host.nodeId} is live`)
})
