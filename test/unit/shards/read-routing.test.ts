// Reads on every core (src/shards/read-routing.ts, src/shards/actor-pool.ts):
// reads of one tenant are spread over every actor once they have opened the
// shards for reading, writes stay with the owner, and a consent change is
// answered only after every other thread acknowledged dropping its caches.
// The actors here are a stand-in worker that says who answered.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ActorPool } from '../../../src/shards/actor-pool'
import { leastLoaded, readsAnywhere } from '../../../src/shards/read-routing'
import type { ActorReply, Operation } from '../../../src/contract/messages'
import { sleep } from '../../../bench/wait'

t.test('leastLoaded: the smallest load, ties taken in turn from start', async (t) => {
  t.equal(leastLoaded([3, 1, 2], 0), 1)
  t.equal(leastLoaded([1, 1, 1], 0), 0)
  t.equal(leastLoaded([1, 1, 1], 2), 2)
  t.equal(leastLoaded([0, 5, 0], 1), 2)
})

t.test('reads and scans may run anywhere; writes and consent reads may not', async (t) => {
  t.ok(readsAnywhere({ op: 'getNode', tenant: 't', node: { ns: 'n', type: 'x', id: '1' } }))
  t.ok(readsAnywhere({ op: 'neighbours', tenant: 't', node: { ns: 'n', type: 'x', id: '1' }, format: 'json' }))
  t.notOk(readsAnywhere({ op: 'deleteNode', tenant: 't', node: { ns: 'n', type: 'x', id: '1' }, trace: undefined }))
  t.notOk(readsAnywhere({ op: 'getConsent', tenant: 't', ref: 'r', caller: { kind: 'tenant' } }))
})

/** The compiled codec, which the stand-in speaks as a real actor does (hot calls cross as flat runs). */
const CODEC = JSON.stringify(join(__dirname, '..', '..', '..', 'dist', 'src', 'contract', 'codec.js'))

/** Answers every call with the thread that ran it; acknowledges forgetConsent 300 ms late, announcing both ends as events. */
const FAKE_ACTOR = `
const { parentPort, workerData, threadId } = require('node:worker_threads')
const { decodeRequests, encodeReplies } = require(${CODEC})
const owned = new Set(workerData.shards)
let readers = new Set()
const ok = (id, body) => ({ kind: 'ok', id, status: 200, body, total: undefined })
parentPort.on('message', (wire) => {
  const out = []
  for (const req of decodeRequests(wire)) {
    if (req.kind === 'openReaders') { readers = new Set(req.shards); out.push(ok(req.id, undefined)) }
    else if (req.kind === 'forgetConsent') {
      out.push({ kind: 'events', id: 0, tenant: 'forget-start', last: threadId })
      setTimeout(() => parentPort.postMessage(encodeReplies([{ kind: 'events', id: 0, tenant: 'forget-done', last: threadId }, ok(req.id, undefined)])), 300)
    }
    else if (req.kind === 'call') out.push(ok(req.id, JSON.stringify({ thread: threadId, owns: owned.has(req.shard), reads: readers.has(req.shard) })))
    else if (req.kind === 'shutdown') out.push({ kind: 'closed', id: req.id })
  }
  parentPort.postMessage(encodeReplies(out))
})
parentPort.postMessage(encodeReplies([{ kind: 'started', id: 0 }]))
`

interface Answer { thread: number; owns: boolean; reads: boolean }

function call(pool: ActorPool, op: Operation): Promise<ActorReply> {
  return new Promise((resolve) => pool.call((op as { tenant?: string }).tenant ?? 't', op, resolve))
}
const answerOf = (r: ActorReply): Answer => {
  if (r.kind !== 'ok' || r.body === undefined) throw new Error(`unexpected reply ${JSON.stringify(r)}`)
  return JSON.parse(r.body) as Answer
}
const getNode = (id: string): Operation => ({ op: 'getNode', tenant: 't', node: { ns: 'core', type: 'customer', id } })

t.test('a pool of three: reads spread over every thread, writes on the owner, consent changes wait for every thread', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'read-routing-'))
  const workerFile = join(dir, 'fake-actor.js')
  writeFileSync(workerFile, FAKE_ACTOR)
  const pool = new ActorPool({ dataDir: dir, shardCount: 3, workerCount: 3, publicUrl: 'http://x', metamodel: {}, masterKey: Buffer.alloc(32), workerFile })
  t.teardown(async () => {
    await pool.close()
    rmSync(dir, { recursive: true, force: true })
  })
  await pool.started()
  // The readers open right after the start; wait until a read lands on a thread that does not own the shard.
  for (let tries = 0; tries < 100; tries++) {
    if ((await Promise.all(Array.from({ length: 6 }, (_, n) => call(pool, getNode(`w${n}`))))).some((r) => !answerOf(r).owns)) break
    await sleep(20)
  }
  const reads = (await Promise.all(Array.from({ length: 60 }, (_, n) => call(pool, getNode(`n${n}`))))).map(answerOf)
  t.equal(new Set(reads.map((a) => a.thread)).size, 3, 'reads of one tenant ran on all three threads')
  t.ok(reads.every((a) => a.owns || a.reads), 'a thread that does not own the shard has opened it for reading')
  const writes = (await Promise.all(Array.from({ length: 20 }, () => call(pool, { op: 'createConsent', tenant: 't', subject: 's' })))).map(answerOf)
  t.ok(writes.every((a) => a.owns), 'every write ran on the owner')

  const seen: string[] = []
  const stop = pool.onEvents((tenant, thread) => seen.push(`${tenant}:${thread}`))
  const revoked = await call(pool, { op: 'revokeConsent', tenant: 't', ref: 'cr_x', caller: { kind: 'tenant' } })
  stop()
  t.ok(answerOf(revoked).owns, 'the revocation ran on the owner')
  t.equal(seen.filter((s) => s.startsWith('forget-done:')).length, 2, 'answered only after both other threads acknowledged forgetting the consent')
})

t.test('leastLoaded skips what cannot take the call (Infinity)', async (t) => {
  const inf = Number.POSITIVE_INFINITY
  t.equal(leastLoaded([inf, 4, inf], 0), 1)
  t.equal(leastLoaded([inf, 4, inf], 2), 1)
})
