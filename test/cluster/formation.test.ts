// The harness itself: three nats-servers in their own namespaces form one
// JetStream cluster, and two product hosts start in cluster mode beside them.
import t from 'tap'
import { request } from 'undici'
import { clusterForFile, clusterSkip } from './helpers/cluster'
import { metaCluster } from './helpers/nats-cluster'

const skip = clusterSkip()
const cluster = clusterForFile(t, skip)

t.test('three NATS servers form one JetStream cluster', { skip }, async (t) => {
  const metas = await Promise.all(cluster.nats.map(metaCluster))
  const leaders = new Set(metas.map((m) => m?.leader))
  t.equal(leaders.size, 1, 'every server names the same meta leader')
  for (const m of metas) t.equal(m?.cluster_size, 3, 'of a three-server group')
})

t.test('two product hosts start and answer from their own namespaces', { skip }, async (t) => {
  t.equal(cluster.hosts.length, 2)
  for (const host of cluster.hosts) {
    const res = await request(`${host.url}/health/live`)
    await res.body.text()
    t.equal(res.statusCode, 200, `${host.nodeId} is live at ${host.url}`)
  }
})
