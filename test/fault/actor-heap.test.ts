// --actor-heap-mb (src/config/load-config.ts): each shard actor thread runs with its V8
// old generation capped, so the process's private memory stays bounded; an
// actor that outgrows the cap dies alone and is restarted, its calls in
// flight answered 503, and the process keeps serving. The actor here is a
// stand-in worker that reports its heap limit or allocates without end.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { log } from '../../src/telemetry/log'
import { ActorPool } from '../../src/shards/actor-pool'
import type { ActorReply, Operation } from '../../src/contract/messages'
import { sleep } from '../../bench/wait'

/** The compiled codec, which the stand-in speaks as a real actor does. */
const CODEC = JSON.stringify(join(__dirname, '..', '..', 'dist', 'src', 'contract', 'codec.js'))

/** getNode of id "limit" answers the heap limit in MB; of id "grow", allocates until the thread runs out of heap. */
const FAKE_ACTOR = `
const { parentPort } = require('node:worker_threads')
const { getHeapStatistics } = require('node:v8')
const { decodeRequests, encodeReplies } = require(${CODEC})
const ok = (id, body) => ({ kind: 'ok', id, status: 200, body, total: undefined })
const kept = []
parentPort.on('message', (wire) => {
  const out = []
  for (const req of decodeRequests(wire)) {
    if (req.kind === 'openReaders') out.push(ok(req.id, undefined))
    else if (req.kind === 'call' && req.operation.node.id === 'grow') for (;;) kept.push(new Array(100000).fill({ n: kept.length }))
    else if (req.kind === 'call') out.push(ok(req.id, String(Math.round(getHeapStatistics().heap_size_limit / 1048576))))
    else if (req.kind === 'shutdown') out.push({ kind: 'closed', id: req.id })
  }
  parentPort.postMessage(encodeReplies(out))
})
parentPort.postMessage(encodeReplies([{ kind: 'started', id: 0 }]))
`

const getNode = (id: string): Operation => ({ op: 'getNode', tenant: 't', node: { ns: 'core', type: 'customer', id } })

function call(pool: ActorPool, op: Operation): Promise<ActorReply> {
  return new Promise((resolve) => pool.call('t', op, resolve))
}

async function startPool(t: Test, actorHeapMb: number | undefined): Promise<ActorPool> {
  const dir = mkdtempSync(join(tmpdir(), 'actor-heap-'))
  const workerFile = join(dir, 'fake-actor.js')
  writeFileSync(workerFile, FAKE_ACTOR)
  const pool = new ActorPool({ dataDir: dir, shardCount: 1, workerCount: 1, publicUrl: 'http://x', metamodel: {}, masterKey: Buffer.alloc(32), workerFile, actorHeapMb })
  t.teardown(async () => {
    await pool.close()
    rmSync(dir, { recursive: true, force: true })
  })
  await pool.started()
  return pool
}

const limitOf = (r: ActorReply): number => {
  if (r.kind !== 'ok' || r.body === undefined) throw new Error(`unexpected reply ${JSON.stringify(r)}`)
  return Number(r.body)
}

t.test('the cap reaches the actor thread', async (t) => {
  const capped = limitOf(await call(await startPool(t, 96), getNode('limit')))
  const uncapped = limitOf(await call(await startPool(t, undefined), getNode('limit')))
  // V8's limit is the old generation plus the young one (a few tens of MB).
  t.ok(capped >= 96 && capped < 200, `capped at 96 MB: V8 says ${capped} MB`)
  t.ok(uncapped > capped, `uncapped: V8's own limit, ${uncapped} MB`)
})

t.test('an actor that outgrows the cap dies alone and is restarted', async (t) => {
  const pool = await startPool(t, 64)
  // The pool logs through the server log (src/telemetry/log.ts); its error lines are caught here.
  const errors = log.error
  const logged: string[] = []
  log.error = ((...args: unknown[]) => { logged.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')) }) as typeof log.error
  t.teardown(() => { log.error = errors })
  const died = await call(pool, getNode('grow'))
  t.equal(died.kind, 'error')
  t.equal(died.kind === 'error' ? died.type : '', 'service_unavailable', 'its call in flight is answered 503')
  let after: ActorReply | undefined
  for (let tries = 0; tries < 100; tries++) {
    after = await call(pool, getNode('limit'))
    if (after.kind === 'ok') break
    await sleep(50)
  }
  t.equal(after?.kind, 'ok', 'the restarted actor answers')
  t.ok(logged.some((l) => l.includes('ran out of its heap (--actor-heap-mb 64)') && l.includes('ERR_WORKER_OUT_OF_MEMORY')), 'the log names the cause and the option')
})
