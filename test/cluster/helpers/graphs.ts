// Tenant `demo` through each host of a running test cluster: a token from
// that host and one consent, created once an owner of the shard is known.
import { Graph, createConsent } from '../../helpers/client'
import { getToken } from '../../helpers/server'
import type { Cluster } from './cluster'
import { sleep } from '../../../bench/wait'

/** One Graph per host, sharing a consent (retried until the shard's owner is seen, at most 20 s). */
export async function graphsThroughEveryHost(cluster: Cluster, subject = 'subject-1'): Promise<Graph[]> {
  const tokens = await Promise.all(cluster.hosts.map((h) => getToken(h.url)))
  const first = cluster.hosts[0]!
  let consent: string | undefined
  let last: unknown
  for (let i = 0; i < 80 && consent === undefined; i++) {
    try {
      consent = await createConsent(first.url, 'demo', tokens[0]!, subject)
    } catch (err) {
      last = err
      await sleep(250)
    }
  }
  if (consent === undefined) throw new Error(`no consent could be created through ${first.nodeId}: ${String(last)}`)
  return cluster.hosts.map((h, i) => new Graph(h.url, 'demo', tokens[i]!, consent))
}
