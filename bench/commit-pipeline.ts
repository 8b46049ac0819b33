// The shard actor's commit-and-flush pipeline alone, in one process: this
// thread plays the actor (workers/actor/group-commit.ts on a real shard, the
// real operations), and N closed-loop clients each send their next write as
// soon as the last one is answered (acknowledged only once durable). Requests
// that arrive in one event-loop turn reach the group commit together, as one
// message from the front thread does. It reports what the pipeline does
// without the front thread, the HTTP stack or the load generator:
// writes/s, LMDB commits/s, writes per commit, durable flushes/s, the
// actor thread's CPU per write and its idle share, and the disk's own
// write+fdatasync rate on the same filesystem for comparison.
//
//   node dist/bench/commit-pipeline.js [--op put-node|counter] [--clients 64] [--seconds 5] [--dir DIR]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { MessagePort } from 'node:worker_threads'
import type { ActorReply, Operation } from '../src/contract/messages'
import { Urls } from '../src/contract/urls'
import { deriveKey } from '../src/crypto/master-key'
import { Metamodel, type MetamodelDoc } from '../src/model/metamodel'
import { BlindIndex } from '../workers/crypto/blind-index'
import { GroupCommit, type WriteItem } from '../workers/actor/group-commit'
import { operationTable, runOperation } from '../workers/actor/operations'
import { Outbox } from '../workers/actor/outbox'
import { createConsent } from '../workers/store/consents'
import type { ShardContext } from '../workers/store/context'
import { closeShard, openShard, type ShardStore } from '../workers/store/shard-store'
import { webhookDb } from '../workers/store/webhooks'
import { probeFsync } from './fsync-probe'
import { Histogram } from './histogram'

const METAMODEL: MetamodelDoc = {
  '*': {
    nodes: {
      'core/customer': { owner: 'customer', open: true, properties: { name: { type: 'string', searchable: true }, age: { type: 'integer', searchable: false } } },
      'core/product': { owner: 'tenant', open: true, properties: {} },
    },
    relations: { 'core/customer/core/product/core/viewed': { owner: 'customer', open: true, properties: {} } },
  },
}

export interface PipelineResult {
  op: string
  clients: number
  seconds: number
  writesPerSecond: number
  commitsPerSecond: number
  writesPerCommit: number
  /** Group-commit batches (one per arriving message) per LMDB commit: more than 1 when lmdb-js merged queued transactions. */
  batchesPerCommit: number
  /** Actor-thread CPU microseconds per write. */
  actorUsPerWrite: number
  /** CPU microseconds per write of the whole process (the actor and LMDB's write threads). */
  processUsPerWrite: number
  actorIdle: number
  p50: number
  p99: number
  /** Milliseconds, median: a batch from commit() to committed, and from committed to flushed. */
  commitP50: number
  flushP50: number
}

function threadCpuMs(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 10 // utime + stime, clock ticks of 10 ms
}

function lastTxnId(store: ShardStore): number {
  return (store.env.getStats() as { lastTxnId: number }).lastTxnId
}

export async function runPipeline(o: { op: 'put-node' | 'counter'; clients: number; seconds: number; dir: string }): Promise<PipelineResult> {
  const masterKey = randomBytes(32)
  const store = openShard(o.dir, 0, masterKey)
  webhookDb(store)
  const urls = new Urls('https://graph.test')
  const metamodel = new Metamodel(METAMODEL)
  const blind = new BlindIndex(masterKey)
  const operations = operationTable(deriveKey(masterKey, 'webhook secrets'))
  const context = (s: ShardStore, time: number): ShardContext => ({ store: s, urls, metamodel, blind, now: time, touched: new Set(), schedulesChanged: false, shred: [] })
  const tenant = 'demo'
  const created = await store.env.transaction(() => createConsent(store, tenant, 'user-1', Date.now()))
  await store.env.flushed
  if (created.kind !== 'ok') throw new Error('consent not created')
  const ref = (JSON.parse(created.body!) as { consentReference: string }).consentReference
  const ctx = { consent: ref, client: 'client-1', trace: undefined, schedule: undefined, decay: undefined }
  let seq = 0
  const nextOp = (): Operation => {
    const n = seq++
    if (o.op === 'put-node') {
      return { op: 'putNode', tenant, node: { ns: 'core', type: 'customer', id: `c${n % 100_000}` }, props: { name: `Customer ${n} with a longer name`, age: n % 90, email: `customer${n}@example.com`, city: 'Somewhere in the middle of a country', note: 'x'.repeat(100) }, ctx }
    }
    const c = n % 1000
    return { op: 'incrementCounter', tenant, relation: { from: { ns: 'core', type: 'customer', id: `c${c}` }, to: { ns: 'core', type: 'product', id: `p${n % 50}` }, rel: { ns: 'core', type: 'viewed', id: 'spread' } }, name: 'views', ctx }
  }
  if (o.op === 'counter') {
    // The counters' end nodes exist, as in the bench's data set.
    await store.env.transaction(() => {
      const sc = context(store, Date.now())
      for (let c = 0; c < 1000; c++) runOperation(operations, sc, { op: 'putNode', tenant, node: { ns: 'core', type: 'customer', id: `c${c}` }, props: { name: `c${c}` }, ctx })
      for (let p = 0; p < 50; p++) runOperation(operations, sc, { op: 'putNode', tenant, node: { ns: 'core', type: 'product', id: `p${p}` }, props: {}, ctx })
    })
    await store.env.flushed
  }

  let measuring = false
  let stopping = false
  let writes = 0
  let batches = 0
  const latency = new Histogram()
  /** From a batch's commit() to its commit resolving, and from there to its flush (microseconds as the histogram counts). */
  const commitMs = new Histogram()
  const flushMs = new Histogram()
  const sentAt = new Map<number, number>()
  let pending: WriteItem[] = []
  let scheduled = false
  let nextId = 1
  const send = (): void => {
    const id = nextId++
    sentAt.set(id, performance.now())
    pending.push({ id, op: nextOp() })
    if (scheduled) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      const items = pending
      pending = []
      if (measuring) batches++
      commits.commit(store, items, Date.now())
    })
  }
  const port = {
    postMessage(replies: ActorReply[]) {
      for (const r of replies) {
        if (r.kind !== 'ok') throw new Error(`write failed: ${r.kind === 'error' ? r.message : ''}`)
        const t0 = sentAt.get(r.id)!
        sentAt.delete(r.id)
        if (measuring) {
          writes++
          latency.record((performance.now() - t0) * 1000)
        }
        if (!stopping) send()
      }
    },
  } as unknown as MessagePort
  const outbox = new Outbox(port)
  const commits = new GroupCommit(outbox, {
    context,
    run: (sc, op) => runOperation(operations, sc, op),
    eventsAppended: () => undefined,
    schedulesChanged: () => undefined,
    measured: (_shard, _size, commitSeconds, flushSeconds) => {
      if (!measuring) return
      commitMs.record(commitSeconds * 1e6)
      flushMs.record(flushSeconds * 1e6)
    },
  })

  for (let c = 0; c < o.clients; c++) send()
  await new Promise((r) => setTimeout(r, 1000))
  measuring = true
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  const actor0 = threadCpuMs(process.pid)
  const txn0 = lastTxnId(store)
  await new Promise((r) => setTimeout(r, o.seconds * 1000))
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const actorMs = threadCpuMs(process.pid) - actor0
  const txns = lastTxnId(store) - txn0
  measuring = false
  stopping = true
  await commits.drain()
  await new Promise((r) => setTimeout(r, 50))
  await commits.drain()
  await closeShard(store)
  const s = latency.summary()
  return {
    op: o.op,
    clients: o.clients,
    seconds: wall / 1000,
    writesPerSecond: Math.round(writes / (wall / 1000)),
    commitsPerSecond: Math.round(txns / (wall / 1000)),
    writesPerCommit: +(writes / txns).toFixed(2),
    batchesPerCommit: +(batches / txns).toFixed(2),
    actorUsPerWrite: +(actorMs * 1000 / writes).toFixed(1),
    processUsPerWrite: +((cpu.user + cpu.system) / writes).toFixed(1),
    actorIdle: +(1 - actorMs / wall).toFixed(2),
    p50: s.p50,
    p99: s.p99,
    commitP50: commitMs.summary().p50,
    flushP50: flushMs.summary().p50,
  }
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1]! : fallback
}

if (require.main === module) {
  const base = arg('--dir', tmpdir())
  const dir = mkdtempSync(join(base, 'commit-pipeline-'))
  const op = arg('--op', 'put-node') as 'put-node' | 'counter'
  runPipeline({ op, clients: Number(arg('--clients', '64')), seconds: Number(arg('--seconds', '5')), dir })
    .then((r) => {
      const disk = probeFsync(base, { maxMs: 2000 })
      console.log(JSON.stringify({ ...r, diskSyncsPerSecond: Math.round(disk.syncs / disk.seconds), diskP50: disk.p50, diskP99: disk.p99 }))
    })
    .finally(() => rmSync(dir, { recursive: true, force: true }))
}
