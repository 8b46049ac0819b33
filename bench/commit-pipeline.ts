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
//   node dist/bench/commit-pipeline.js [--op put-node|counter] [--clients 64] [--seconds 5] [--jitter-ms 0] [--searchable] [--hold] [--dir DIR]
// --jitter-ms J: a client waits a random 0-J ms between an answer and its next write (without it the
// clients fall into lockstep: one batch of all of them at a time).
// --hold: an experiment, not what the actor does: a batch that arrives while a commit is in flight waits
// for it to be flushed, so at most one transaction is in flight (fewer, larger syncs).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { MessagePort } from 'node:worker_threads'
import type { Operation } from '../src/contract/messages'
import { decodeReplies } from '../src/contract/codec'
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
import { sleep } from './wait'

// The side-by-side harness's shapes (../shared/peers/harness): put-node upserts ~250-byte bodies
// on random ids out of 100k of a type with no searchable property; counter increments one of
// 100 hot counters. --searchable indexes name and age (the shape of `npm run bench`'s put-node).
const metamodel = (searchable: boolean): MetamodelDoc => ({
  '*': {
    nodes: {
      'bench/item': { owner: 'customer', open: true, properties: searchable ? { name: { type: 'string', searchable: true }, age: { type: 'integer', searchable: true } } : {} },
      'bench/member': { owner: 'customer', open: true, properties: {} },
      'bench/hot': { owner: 'customer', open: true, properties: {} },
    },
    relations: { 'bench/member/bench/hot/bench/viewed': { owner: 'customer', open: true, properties: { views: { type: 'integer', searchable: false } } } },
  },
})

const FIRST = ['Ada', 'Alan', 'Grace', 'Linus', 'Barbara', 'Edsger', 'Donald', 'Margaret']
const COUNTRY = ['DE', 'FR', 'CH', 'US', 'GB', 'NL', 'IT', 'ES']
function props250(n: number): Record<string, unknown> {
  return {
    name: `${FIRST[n % 8]} item ${n}`, email: `item.${n}@example.com`, age: 18 + (n % 60), country: COUNTRY[n % 8],
    score: (n % 9973) / 9973, vip: n % 7 === 0, tags: ['alpha', 'beta', 'gamma'],
    bio: 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor', lang: 'en', seq: n,
  }
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
  /** Milliseconds, median, of one batch (exact only when batches do not overlap: lockstep, --jitter-ms 0). */
  phasesP50: { waitToRun: number; running: number; committingAndSync: number }
  /** 4 KiB pages LMDB wrote per commit, and the milliseconds its sync took (lmdb-js trackMetrics). */
  pagesPerCommit: number
  syncMsPerCommit: number
  flushP50: number
}

function threadCpuMs(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 10 // utime + stime, clock ticks of 10 ms
}

/** lmdb-js's figures of the environment; the LMDB metrics are there because the probe opens it with trackMetrics. */
interface EnvFigures { lastTxnId: number; pagesWritten?: number; timeSync?: number; timeDuringTxns?: number; timeTxnWaiting?: number }

function figures(store: ShardStore): EnvFigures {
  return store.env.getStats() as EnvFigures
}

/** The probe's shards count their pages written and sync time (lmdb-js's trackMetrics); the service's do not. */
function withMetrics<T>(fn: () => T): T {
  const lmdb = require('lmdb') as { open: (o: object) => unknown }
  const open = lmdb.open
  lmdb.open = (o: object) => open({ ...o, trackMetrics: true })
  try {
    return fn()
  } finally {
    lmdb.open = open
  }
}

export async function runPipeline(o: { op: 'put-node' | 'counter'; clients: number; seconds: number; dir: string; jitterMs: number; searchable: boolean; ids?: number; hold?: boolean }): Promise<PipelineResult> {
  const masterKey = randomBytes(32)
  const store = withMetrics(() => openShard(o.dir, 0, masterKey))
  webhookDb(store)
  const urls = new Urls('https://graph.test')
  const model = new Metamodel(metamodel(o.searchable))
  const blind = new BlindIndex(masterKey)
  const operations = operationTable(deriveKey(masterKey, 'webhook secrets'))
  const context = (s: ShardStore, time: number): ShardContext => ({ store: s, urls, metamodel: model, blind, now: time, touched: new Set(), schedulesChanged: false, shred: [] })
  const tenant = 'demo'
  const created = await store.env.transaction(() => createConsent(store, tenant, 'user-1', Date.now()))
  await store.env.flushed
  if (created.kind !== 'ok') throw new Error('consent not created')
  const ref = (JSON.parse(created.body!) as { consentReference: string }).consentReference
  const ctx = { consent: ref, client: 'client-1', trace: undefined, schedule: undefined, decay: undefined }
  let seq = 0
  /** put-node's ids: 1 to this (the harness: 100k). */
  const ids = o.ids ?? 100_000
  const nextCounter = (k: number): Operation => ({ op: 'incrementCounter', tenant, relation: { from: { ns: 'bench', type: 'member', id: `m${k}` }, to: { ns: 'bench', type: 'hot', id: `h${k}` }, rel: { ns: 'bench', type: 'viewed', id: `v${k}` } }, name: 'views', ctx })
  const nextOp = (): Operation => {
    seq++
    if (o.op === 'put-node') return { op: 'putNode', tenant, node: { ns: 'bench', type: 'item', id: `i${1 + Math.floor(Math.random() * ids)}` }, props: props250(seq), ctx }
    return nextCounter(1 + Math.floor(Math.random() * 100))
  }
  // The data set the harness preloads: the put-node ids exist half the time, the counters' relations exist.
  await store.env.transaction(() => {
    const sc = context(store, Date.now())
    for (let n = 1; n <= ids; n += 2) runOperation(operations, sc, { op: 'putNode', tenant, node: { ns: 'bench', type: 'item', id: `i${n}` }, props: props250(n), ctx })
    for (let k = 1; k <= 100; k++) runOperation(operations, sc, nextCounter(k))
  })
  await store.env.flushed

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
      if (o.hold && inFlight > 0) return
      startCommit()
    })
  }
  /** Commits what is pending. With --hold at most one commit is in flight: what arrives meanwhile waits for its end. */
  let inFlight = 0
  const startCommit = (): void => {
    if (pending.length === 0) return
    const items = pending
    pending = []
    if (measuring) batches++
    inFlight++
    commits.commit(store, items, Date.now())
  }
  const committed = (): void => {
    inFlight--
    if (o.hold) startCommit()
  }
  const port = {
    // The outbox posts the codec's wire form, decoded as the front thread does.
    postMessage(wire: unknown) {
      for (const r of decodeReplies(wire)) {
        if (r.kind !== 'ok') throw new Error(`write failed: ${r.kind === 'error' ? r.message : ''}`)
        const t0 = sentAt.get(r.id)!
        sentAt.delete(r.id)
        if (measuring) {
          writes++
          latency.record((performance.now() - t0) * 1000)
        }
        if (stopping) continue
        // The front thread, the HTTP round trip and the client between an answer and the next write.
        if (o.jitterMs > 0) setTimeout(send, Math.random() * o.jitterMs)
        else send()
      }
    },
  } as unknown as MessagePort
  const outbox = new Outbox(port)
  // One batch's timeline: commit() called (its context made), its first write run by lmdb-js's
  // transaction callback, its last write done; `measured` then says when it was committed and flushed.
  const phases = { queued: 0, firstRun: 0, lastRun: 0, inBatch: false }
  const waitToRun = new Histogram()
  const running = new Histogram()
  const afterRun = new Histogram()
  const commits = new GroupCommit(outbox, {
    context: (s, time) => {
      phases.queued = performance.now()
      phases.inBatch = false
      return context(s, time)
    },
    run: (sc, op) => {
      const now = performance.now()
      if (!phases.inBatch) {
        phases.inBatch = true
        phases.firstRun = now
      }
      const r = runOperation(operations, sc, op)
      phases.lastRun = performance.now()
      return r
    },
    eventsAppended: () => undefined,
    schedulesChanged: () => undefined,
    measured: (_shard, _size, commitSeconds, flushSeconds) => {
      committed()
      if (!measuring) return
      waitToRun.record((phases.firstRun - phases.queued) * 1000)
      running.record((phases.lastRun - phases.firstRun) * 1000)
      afterRun.record((performance.now() - flushSeconds * 1000 - phases.lastRun) * 1000)
      commitMs.record(commitSeconds * 1e6)
      flushMs.record(flushSeconds * 1e6)
    },
  })

  for (let c = 0; c < o.clients; c++) send()
  await sleep(1000)
  measuring = true
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  const actor0 = threadCpuMs(process.pid)
  const f0 = figures(store)
  await sleep(o.seconds * 1000)
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const actorMs = threadCpuMs(process.pid) - actor0
  const f1 = figures(store)
  const txns = f1.lastTxnId - f0.lastTxnId
  measuring = false
  stopping = true
  await commits.drain()
  await sleep(50)
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
    phasesP50: { waitToRun: waitToRun.summary().p50, running: running.summary().p50, committingAndSync: afterRun.summary().p50 },
    pagesPerCommit: +(((f1.pagesWritten ?? 0) - (f0.pagesWritten ?? 0)) / txns).toFixed(1),
    syncMsPerCommit: +((((f1.timeSync ?? 0) - (f0.timeSync ?? 0)) * 1000) / txns).toFixed(3),
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
  runPipeline({ op, clients: Number(arg('--clients', '64')), seconds: Number(arg('--seconds', '5')), dir, jitterMs: Number(arg('--jitter-ms', '0')), searchable: process.argv.includes('--searchable'), hold: process.argv.includes('--hold') })
    .then((r) => {
      const disk = probeFsync(base, { maxMs: 2000 })
      console.log(JSON.stringify({ ...r, diskSyncsPerSecond: Math.round(disk.syncs / disk.seconds), diskP50: disk.p50, diskP99: disk.p99 }))
    })
    .finally(() => rmSync(dir, { recursive: true, force: true }))
}
