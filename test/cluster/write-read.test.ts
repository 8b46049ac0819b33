// Scenario 1: a write through host A is read through host B at once (reads
// go to the owner), and a shard without a valid owner answers 503 with
// Retry-After of one lease period, never a standby's stale copy (the
// failover scenarios cover the ownerless shard).
import t from 'tap'
import { WebSocket } from 'undici'
import { Graph } from '../helpers/client'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile } from './helpers/leases'
import { sleep } from '../../bench/wait'

const { skip, cluster, leases: clusterLeases } = clusterFile(t)

t.test('a write through one host is read through the other at once', { skip }, async (t) => {
  const leases = await clusterLeases()
  const [viaA, viaB] = (await graphsThroughEveryHost(cluster)) as [Graph, Graph]
  for (let i = 0; i < 20; i++) {
    const writer = i % 2 === 0 ? viaA : viaB
    const reader = i % 2 === 0 ? viaB : viaA
    t.equal((await writer.put(`nodes/core/customer/c${i}`, { n: i })).status, 204, `write ${i}`)
    const read = await reader.get(`nodes/core/customer/c${i}`)
    t.equal(read.status, 200, `read ${i} through the other host`)
    t.equal(read.json<{ n: number }>().n, i)
  }
  // A stream (the node listing) read through the host that does not own the shard.
  const listed = await viaA.get('nodes/core/customer?limit=1000', { 'consent-reference': viaA.consent })
  t.equal(listed.status, 200, 'a listing through host A')
  t.equal(listed.json<unknown[]>().length, 20, 'every node written through either host')
  // Metrics: the shards are spread by the hosts' own leases; each host counts what it owns and what it forwarded.
  const owners = await leases.owners()
  await sleep(1500)
  const metrics = await Promise.all(cluster.hosts.map(async (h) => (await fetch(`${h.url}/metrics`)).text()))
  cluster.hosts.forEach((h, i) => {
    const owned = owners.filter((n) => n === h.nodeId).length
    t.match(metrics[i], new RegExp(`cluster_owned_shards ${owned}\\b`), `${h.nodeId} owns ${owned} shards, as the lease bucket says`)
  })
  t.ok(metrics.some((m) => /cluster_forwarded_requests_total\{outcome="answered"\} [1-9]/.test(m)), 'a host counts its forwarded calls')
})

t.test('a long-poll held by a host that does not own the shard wakes when the event is written', { skip }, async (t) => {
  const [viaA, viaB] = (await graphsThroughEveryHost(cluster)) as [Graph, Graph]
  const head = (await viaA.get('events?after=0&limit=1000')).json<{ next: number }>().next
  const t0 = Date.now()
  const waiting = viaA.get(`events?after=${head}&wait=20`)
  await sleep(500)
  t.equal((await viaB.put('nodes/core/customer/lp1', {})).status, 204)
  const page = (await waiting).json<{ events: { payload: { id: string } }[] }>()
  t.ok(Date.now() - t0 < 10_000, 'answered when the event came, not at the 20 s timeout')
  t.equal(page.events[0]?.payload.id, 'lp1')
})

t.test('a WebSocket event stream held by a host that does not own the shard delivers each event at once', { skip }, async (t) => {
  const [viaA, viaB] = (await graphsThroughEveryHost(cluster)) as [Graph, Graph]
  const head = (await viaA.get('events?after=0&limit=1000')).json<{ next: number }>().next
  const url = `${viaA.base.replace(/^http/, 'ws')}/graph/v1/demo/events/stream?after=${head}`
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${viaA.token}` } })
  const messages: string[] = []
  ws.addEventListener('message', (e) => messages.push(String(e.data)))
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve())
    ws.addEventListener('error', () => reject(new Error('the WebSocket did not open')))
  })
  t.teardown(() => ws.close())
  for (let i = 0; i < 5; i++) t.equal((await viaB.put(`nodes/core/customer/ws${i}`, {})).status, 204)
  const deadline = Date.now() + 10_000
  while (messages.length < 5 && Date.now() < deadline) await sleep(50)
  const ids = messages.map((m) => (JSON.parse(m) as { payload: { id: string } }).payload.id)
  t.same(ids, ['ws0', 'ws1', 'ws2', 'ws3', 'ws4'], 'every event, in order, within seconds')
})
