// Scenario 2: 8 clients incrementing one counter through both hosts end at
// the number of 200s, and no value is issued twice.
import t from 'tap'
import type { Graph } from '../helpers/client'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile } from './helpers/leases'

const { skip, cluster, leases: clusterLeases } = clusterFile(t)

const REL = 'core/customer/k1/core/product/k2/core/viewed/k'
const PER_CLIENT = 40

t.test('8 clients through both hosts: the counter ends at the number of 200s, each value once', { skip }, async (t) => {
  await clusterLeases() // every shard has an owner
  const graphs = await graphsThroughEveryHost(cluster)
  t.equal((await graphs[0]!.put(`relations/${REL}`, { views: 0 })).status, 204)
  const values: number[] = []
  let failures = 0
  await Promise.all(Array.from({ length: 8 }, async (_, client) => {
    const g: Graph = graphs[client % graphs.length]!
    for (let i = 0; i < PER_CLIENT; i++) {
      const res = await g.post(`counters/${REL}/views`)
      if (res.status === 200) values.push(res.json<{ views: number }>().views)
      else failures++
    }
  }))
  t.equal(failures, 0, 'every increment answered 200 (a stable owner)')
  t.equal(new Set(values).size, values.length, 'no value issued twice')
  const final = (await graphs[1]!.get(`relations/${REL}`)).json<{ views: number }>().views
  t.equal(final, values.length, 'the counter ends at the number of 200s')
  t.equal(Math.max(...values), final)
})
