// What one neighbours request costs in process, without HTTP: the actor's
// scan steps until done (adjacency scan, node and relation reads, consent and
// key checks, decryption, rendering), the hand-over of each slice to the
// front thread (a structured clone, as postMessage does) and the front's
// rendering of the body (joining the slices, UTF-8 bytes as uWebSockets.js
// writes them). Degree 10 and degree 1,000 on a temp shard shaped like the
// bench's data set (customer hubs, tenant-owned products, customer-owned
// `viewed` relations). Prints CPU µs per request, one line per round, and the
// median of the rounds; to compare two builds, run each build's copy in
// turn (interleaved) and compare the medians.
// `node dist/bench/neighbours-cost.js [rounds [10|1000]]`
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Metamodel, type MetamodelDoc } from '../src/model/metamodel'
import { Urls } from '../src/contract/urls'
import type { NodeRef, RelationRef, WriteContext } from '../src/contract/messages'
import { BlindIndex } from '../workers/crypto/blind-index'
import { createConsent } from '../workers/store/consents'
import type { ShardContext } from '../workers/store/context'
import { putNode } from '../workers/store/nodes'
import { putRelation } from '../workers/store/relations'
import { NeighboursScan } from '../workers/store/scans'
import { closeShard, openShard } from '../workers/store/shard-store'
import { bootstrapDoc, customerBody, productBody, viewedBody } from './fixture'

const TENANT = 'bench-t00'
const HUBS10 = 200
const HUBS1000 = 2
const PRODUCTS = 2_000

const customer = (id: string): NodeRef => ({ ns: 'core', type: 'customer', id })
const product = (id: string): NodeRef => ({ ns: 'core', type: 'product', id })
const viewed = (c: string, p: string, id: string): RelationRef => ({ from: customer(c), to: product(p), rel: { ns: 'core', type: 'viewed', id } })

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5)
  /** `10` or `1000`: measure that degree alone (for a profile) */
  const only = process.argv[3]
  const dir = mkdtempSync(join(tmpdir(), 'neighbours-cost-'))
  const masterKey = randomBytes(32)
  const store = openShard(dir, 0, masterKey)
  const urls = new Urls('http://127.0.0.1:8080')
  const metamodel = new Metamodel((bootstrapDoc() as { metamodel: MetamodelDoc }).metamodel)
  const blind = new BlindIndex(masterKey)
  const context = (): ShardContext => ({ store, urls, metamodel, blind, now: Date.now(), touched: new Set(), schedulesChanged: false, shred: [] })
  try {
    const created = await store.env.transaction(() => createConsent(store, TENANT, 'user-1', Date.now()))
    if (created.kind !== 'ok') throw new Error('no consent')
    const ref = (JSON.parse(created.body!) as { consentReference: string }).consentReference
    const ctx: WriteContext = { consent: ref, client: 'bench-client', trace: undefined, schedule: undefined, decay: undefined }
    const json = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>
    await store.env.transaction(() => {
      const sc = context()
      for (let j = 0; j < PRODUCTS; j++) putNode(sc, TENANT, product(`p${j}`), json(productBody(j)), ctx)
      for (let k = 0; k < HUBS10; k++) {
        putNode(sc, TENANT, customer(`hub10-${k}`), json(customerBody(k, `Hub ${k}`)), ctx)
        for (let e = 0; e < 10; e++) putRelation(sc, TENANT, viewed(`hub10-${k}`, `p${(k * 10 + e) % PRODUCTS}`, 'v'), json(viewedBody(e)), ctx)
      }
      for (let k = 0; k < HUBS1000; k++) {
        putNode(sc, TENANT, customer(`hub1000-${k}`), json(customerBody(k, `Hub ${k}`)), ctx)
        for (let e = 0; e < 1000; e++) putRelation(sc, TENANT, viewed(`hub1000-${k}`, `p${e}`, 'v'), json(viewedBody(e)), ctx)
      }
    })
    await store.env.flushed
    // What a reading thread sees: nothing cached from the writes.
    for (const cache of Object.values(store.cache)) cache.clear()

    /** One request: every slice, handed over and rendered as the front thread does (JSON array). */
    const request = (hub: string): number => {
      const scan = new NeighboursScan(TENANT, customer(hub))
      const sc = context()
      let bytes = 0
      let written = 0
      for (;;) {
        const slice = scan.step(sc)
        if (slice.notFound !== undefined) throw new Error(slice.notFound)
        const handed = structuredClone({ kind: 'chunks', id: 1, chunks: slice.chunks, done: slice.done })
        const text = (written === 0 ? '[' : ',') + handed.chunks.join(',')
        written += handed.chunks.length
        bytes += Buffer.from(slice.done ? text + ']' : text).length
        if (slice.done) return bytes
      }
    }
    // CPU time, not elapsed: on a busy machine the process waits for a core, and that is not its cost.
    const perRequest = (hubs: string[], n: number): number => {
      const start = process.cpuUsage()
      for (let i = 0; i < n; i++) request(hubs[i % hubs.length]!)
      const used = process.cpuUsage(start)
      return (used.user + used.system) / n
    }
    const hubs10 = [...Array(HUBS10).keys()].map((k) => `hub10-${k}`)
    const hubs1000 = [...Array(HUBS1000).keys()].map((k) => `hub1000-${k}`)
    console.log(`bytes: degree 10 ${request(hubs10[0]!)}, degree 1000 ${request(hubs1000[0]!)}`)
    perRequest(hubs10, 4_000)
    perRequest(hubs1000, 20)
    const d10: number[] = []
    const d1000: number[] = []
    for (let r = 0; r < rounds; r++) {
      d10.push(only === '1000' ? 0 : perRequest(hubs10, 10_000))
      d1000.push(only === '10' ? 0 : perRequest(hubs1000, 100))
      console.log(`round ${r + 1}: degree 10 ${d10.at(-1)!.toFixed(1)} µs, degree 1000 ${d1000.at(-1)!.toFixed(0)} µs`)
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    console.log(`median: degree 10 ${median(d10).toFixed(1)} µs (${Math.min(...d10).toFixed(1)}-${Math.max(...d10).toFixed(1)}), degree 1000 ${median(d1000).toFixed(0)} µs (${Math.min(...d1000).toFixed(0)}-${Math.max(...d1000).toFixed(0)})`)
  } finally {
    await closeShard(store)
    rmSync(dir, { recursive: true, force: true })
  }
}

void main()
