// A shard actor that dies is restarted by the front thread: its in-flight
// calls get 503 (service_unavailable), later calls work, and its shards are
// intact. Runs the real compiled actor in worker threads, in process.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { truncateSync } from 'node:fs'
import { join } from 'node:path'
import { ActorPool } from '../../src/shards/actor-pool'
import { log } from '../../src/telemetry/log'
import type { ActorReply, Operation, WriteContext } from '../../src/contract/messages'
import { ROOT, removeDir, tempDir } from '../helpers/server'
import { sleep } from '../../bench/wait'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

const masterKey = randomBytes(32)
const node = (id: string) => ({ ns: 'core', type: 'customer', id })

/**
 * Waits until every actor has opened the others' shards for reading: a worker
 * terminated inside LMDB's native open aborts the whole process (a Node
 * limit: a native throw while the thread is being terminated is fatal).
 */
async function readersOpen(pool: ActorPool): Promise<void> {
  for (let i = 0; i < 300 && !pool.allReadersOpen(); i++) await sleep(100)
}

function call(pool: ActorPool, op: Operation & { tenant: string }): Promise<ActorReply> {
  return new Promise((resolve) => pool.call(op.tenant, op, resolve))
}

t.test('kill a worker: in-flight calls get 503, the actor comes back with its data', async (t) => {
  const dir = tempDir()
  const pool = new ActorPool({
    dataDir: dir, shardCount: 2, workerCount: 2, publicUrl: 'http://x', metamodel: {}, masterKey,
    workerFile: join(ROOT, 'dist', 'workers', 'shard-actor.js'),
  })
  t.teardown(async () => {
    await readersOpen(pool)
    await pool.close()
    removeDir(dir)
  })
  const created = await call(pool, { op: 'createConsent', tenant: 't1', subject: 's' })
  if (created.kind !== 'ok') throw new Error('no consent')
  const ctx: WriteContext = { consent: (JSON.parse(created.body!) as { consentReference: string }).consentReference, client: 'test', trace: undefined, schedule: undefined, decay: undefined }
  const put = await call(pool, { op: 'putNode', tenant: 't1', node: node('a'), props: { v: 1 }, ctx })
  t.equal(put.kind === 'ok' && put.status, 204)

  await readersOpen(pool)
  // Queue calls, then kill every worker before they can answer.
  const inflight = Array.from({ length: 50 }, (_, i) => call(pool, { op: 'putNode', tenant: 't1', node: node(`b${i}`), props: { i }, ctx }))
  await Promise.all(pool.workers().map((w) => w.terminate()))
  const replies = await Promise.all(inflight)
  for (const r of replies) {
    t.ok(r.kind === 'error' ? r.type === 'service_unavailable' : r.kind === 'ok', 'each in-flight call gets 503 or was already acknowledged')
  }
  t.ok(pool.restartCount() >= 1, 'the actors were restarted')

  const get = await call(pool, { op: 'getNode', tenant: 't1', node: node('a') })
  t.equal(get.kind, 'ok', 'the restarted actor serves its shard')
  if (get.kind === 'ok') t.match(JSON.parse(get.body!), { id: 'a', v: 1 })
  const again = await call(pool, { op: 'putNode', tenant: 't1', node: node('c'), props: {}, ctx })
  t.equal(again.kind === 'ok' && again.status, 204, 'and takes writes again')
})

t.test('a full queue answers 503 at once instead of queueing without bound', async (t) => {
  const dir = tempDir()
  const pool = new ActorPool({
    dataDir: dir, shardCount: 1, workerCount: 1, publicUrl: 'http://x', metamodel: {}, masterKey, maxPending: 10,
    workerFile: join(ROOT, 'dist', 'workers', 'shard-actor.js'),
  })
  t.teardown(async () => {
    await readersOpen(pool)
    await pool.close()
    removeDir(dir)
  })
  const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => call(pool, { op: 'getNode', tenant: 't', node: node(`n${i}`) })))
  const unavailable = replies.filter((r) => r.kind === 'error' && r.type === 'service_unavailable').length
  t.equal(unavailable, 20, '20 over the limit of 10 are refused')
  t.equal(replies.filter((r) => r.kind === 'error' && r.type === 'element_not_found').length, 10)
})

t.test('an actor that keeps dying is stopped: its shards answer 503 with the reason, others keep working', async (t) => {
  const dir = tempDir()
  const pool = new ActorPool({
    dataDir: dir, shardCount: 1, workerCount: 1, publicUrl: 'http://x', metamodel: {}, masterKey, maxRestarts: 2,
    workerFile: join(ROOT, 'dist', 'workers', 'shard-actor.js'),
  })
  t.teardown(async () => {
    await readersOpen(pool)
    await pool.close()
    removeDir(dir)
  })
  await pool.started()
  await readersOpen(pool)
  // The pool logs through the server log (src/telemetry/log.ts); its error lines are caught here.
  const errors = log.error
  const logged: string[] = []
  log.error = ((...args: unknown[]) => { logged.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')) }) as typeof log.error
  t.teardown(() => { log.error = errors })
  const created = await call(pool, { op: 'createConsent', tenant: 't', subject: 's' })
  if (created.kind !== 'ok') throw new Error('no consent')
  const ctx: WriteContext = { consent: (JSON.parse(created.body!) as { consentReference: string }).consentReference, client: 'test', trace: undefined, schedule: undefined, decay: undefined }
  t.equal((await call(pool, { op: 'putNode', tenant: 't', node: node('k'), props: { v: 1 }, ctx })).kind, 'ok')
  for (let kill = 0; kill < 3; kill++) {
    // Each kill waits for the restarted actor to answer first.
    const before = await call(pool, { op: 'getNode', tenant: 't', node: node('x') })
    t.equal(before.kind === 'error' && before.type, 'element_not_found', `actor alive before kill ${kill + 1}`)
    // Read twice: the front thread keeps an answer asked for again (src/shards/kept-answers.ts).
    await call(pool, { op: 'getNode', tenant: 't', node: node('k') })
    const read = await call(pool, { op: 'getNode', tenant: 't', node: node('k') })
    t.ok(read.kind === 'ok' && read.kept !== undefined, 'a node read, and kept by the front thread')
    await readersOpen(pool)
    await Promise.all(pool.workers().map((w) => w.terminate()))
    await sleep(50)
  }
  const after = await call(pool, { op: 'getNode', tenant: 't', node: node('x') })
  t.equal(after.kind === 'error' && after.type, 'service_unavailable')
  t.match(after.kind === 'error' ? after.message : '', /stopped \(it exited 3 times within 60 s/)
  const kept = await call(pool, { op: 'getNode', tenant: 't', node: node('k') })
  t.equal(kept.kind === 'error' && kept.type, 'service_unavailable', 'the node read before the last kill is not served from memory: the stopped shard answers 503')
  t.ok(logged.some((l) => /shard actor 0 stopped, its shards answer 503/.test(l)), 'the reason is logged')
  t.equal(pool.restartCount(), 2, 'restarted twice, then stopped')
})

t.test('a shard damaged while the server runs is refused at the restart, not served', async (t) => {
  const dir = tempDir()
  const pool = new ActorPool({
    dataDir: dir, shardCount: 1, workerCount: 1, publicUrl: 'http://x', metamodel: {}, masterKey,
    workerFile: join(ROOT, 'dist', 'workers', 'shard-actor.js'),
  })
  t.teardown(async () => {
    await readersOpen(pool)
    await pool.close()
    removeDir(dir)
  })
  await pool.started()
  await readersOpen(pool)
  const created = await call(pool, { op: 'createConsent', tenant: 't1', subject: 's' })
  if (created.kind !== 'ok') throw new Error('no consent')
  const ctx: WriteContext = { consent: (JSON.parse(created.body!) as { consentReference: string }).consentReference, client: 'test', trace: undefined, schedule: undefined, decay: undefined }
  t.equal((await call(pool, { op: 'putNode', tenant: 't1', node: node('k'), props: { v: 1 }, ctx })).kind, 'ok')
  // Read twice: the front thread keeps an answer asked for again (src/shards/kept-answers.ts).
  await call(pool, { op: 'getNode', tenant: 't1', node: node('k') })
  const read = await call(pool, { op: 'getNode', tenant: 't1', node: node('k') })
  t.ok(read.kind === 'ok' && read.kept !== undefined, 'the answer is kept (by the front thread too)')
  const errors = console.error
  console.error = () => undefined
  t.teardown(() => { console.error = errors })
  truncateSync(join(dir, 'shards', '0', 'keys.bin'), 0)
  await Promise.all(pool.workers().map((w) => w.terminate()))
  await sleep(1000)
  const after = await call(pool, { op: 'getNode', tenant: 't1', node: node('x') })
  t.equal(after.kind === 'error' && after.type, 'service_unavailable')
  t.match(after.kind === 'error' ? after.message : '', /keys\.bin is missing or truncated/)
  const kept = await call(pool, { op: 'getNode', tenant: 't1', node: node('k') })
  t.equal(kept.kind === 'error' && kept.type, 'service_unavailable', 'a node read before is not served from memory once its actor is down')
})

t.test('closing the pool while the actors open each other\'s shards for reading does not abort the process', async (t) => {
  // Several rounds: the readers' open starts right after every actor has started, so close() lands inside it often.
  for (let round = 0; round < 5; round++) {
    const dir = tempDir()
    const pool = new ActorPool({
      dataDir: dir, shardCount: 8, workerCount: 2, publicUrl: 'http://x', metamodel: {}, masterKey,
      workerFile: join(ROOT, 'dist', 'workers', 'shard-actor.js'),
    })
    await pool.started()
    await pool.close()
    removeDir(dir)
  }
  t.pass('five pools closed during their readers\' open, and the process lives')
})
