// Scenario 1: a write through host A is read through host B at once (reads
// go to the owner), and a shard without a valid owner answers 503 with
// Retry-After of one lease period, never a standby's stale copy.
import t from 'tap'
import { Graph, createConsent } from '../helpers/client'
import { getToken } from '../helpers/server'
import { clusterForFile, clusterSkip } from './helpers/cluster'
import { leasesFor, type Leases } from './helpers/stand-in-leases'

const skip = clusterSkip()
const cluster = clusterForFile(t, skip)
let leases: Leases | undefined
t.teardown(async () => leases?.stop())

t.test('a write through one host is read through the other at once', { skip }, async (t) => {
  leases = await leasesFor(cluster)
  const [a, b] = cluster.hosts as [typeof cluster.hosts[0], typeof cluster.hosts[0]]
  if (leases.standIn) leases.ownAll(b)
  // Wait for the hosts to see the owner of tenant demo's shard.
  const tokenA = await getToken(a.url)
  let consent = ''
  for (let i = 0; i < 40 && consent === ''; i++) {
    consent = await createConsent(a.url, 'demo', tokenA, 'subject-1').catch(async () => {
      await new Promise((r) => setTimeout(r, 250))
      return ''
    })
  }
  t.not(consent, '', 'a consent created through host A')
  const viaA = new Graph(a.url, 'demo', tokenA, consent)
  const viaB = new Graph(b.url, 'demo', await getToken(b.url), consent)
  for (let i = 0; i < 20; i++) {
    const writer = i % 2 === 0 ? viaA : viaB
    const reader = i % 2 === 0 ? viaB : viaA
    t.equal((await writer.put(`nodes/core/customer/c${i}`, { n: i })).status, 204, `write ${i}`)
    const read = await reader.get(`nodes/core/customer/c${i}`)
    t.equal(read.status, 200, `read ${i} through the other host`)
    t.equal(read.json<{ n: number }>().n, i)
  }
})

t.test('no valid owner: 503 with Retry-After of one lease period', { skip }, async (t) => {
  if (leases === undefined || !leases.standIn) {
    t.pass('the hosts hold leases themselves: covered by the failover scenarios')
    return
  }
  const [a] = cluster.hosts
  leases.ownAll(undefined)
  await new Promise((r) => setTimeout(r, cluster.leaseMs + 500))
  const token = await getToken(a!.url)
  const res = await new Graph(a!.url, 'demo', token).get('nodes/core/customer/c0')
  t.equal(res.status, 503)
  t.equal(res.headers['retry-after'], String(Math.ceil(cluster.leaseMs / 1000)))
})
