// Webhook delivery runs once cluster-wide: a webhook registered through one
// host, events written through both, each event POSTed exactly once (by the
// owner of the tenant's shard), in order.
import t from 'tap'
import { createServer } from 'node:http'
import { call, type Graph } from '../helpers/client'
import { graphsThroughEveryHost } from './helpers/graphs'
import { BRIDGE_ADDRESS } from './helpers/netns'
import { clusterFile } from './helpers/leases'
import { sleep } from '../../bench/wait'

const { skip, cluster, leases: clusterLeases } = clusterFile(t, { args: ['--webhook-allow', `${BRIDGE_ADDRESS}/32`, '--webhook-retry-base-ms', '50'] })

const EVENTS = 12

t.test('each event is delivered once, by the owner, whichever host took the write', { skip }, async (t) => {
  await clusterLeases() // every shard has an owner
  const graphs = await graphsThroughEveryHost(cluster)
  const bodies: string[] = []
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (d: Buffer) => { body += d.toString() })
    req.on('end', () => {
      bodies.push(body)
      res.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, BRIDGE_ADDRESS, resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    receiver.closeAllConnections()
    receiver.close(() => resolve())
  }))
  const port = (receiver.address() as { port: number }).port
  const g1 = graphs[1] as Graph
  const registered = await call('POST', g1.url('webhooks'), { authorization: `Bearer ${g1.token}`, 'content-type': 'application/json' }, JSON.stringify({ url: `http://${BRIDGE_ADDRESS}:${port}/hook` }))
  t.equal(registered.status, 201, 'registered through the host that does not own the shard')
  const head = (await graphs[0]!.get('events?after=0&limit=1000')).json<{ next: number }>().next
  for (let i = 0; i < EVENTS; i++) t.equal((await graphs[i % graphs.length]!.put(`nodes/core/customer/w${i}`, { i })).status, 204)
  const deadline = Date.now() + 20_000
  const mine = (): number[] => bodies.map((b) => JSON.parse(b) as { sequence: number }).map((e) => e.sequence).filter((s) => s > head)
  while (mine().length < EVENTS && Date.now() < deadline) await sleep(100)
  // Time for a second host's duplicate to arrive, were there one.
  await sleep(2000)
  const sequences = mine()
  t.equal(sequences.length, EVENTS, 'every event delivered, none twice')
  t.same(sequences, [...sequences].sort((a, b) => a - b), 'in order')
  t.equal(new Set(sequences).size, sequences.length, 'no sequence twice')
})
