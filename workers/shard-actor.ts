// A shard actor: a long-lived worker thread that owns the LMDB environments
// of its shards. It applies every write of a shard in arrival order, one
// write transaction per shard per batch (group commit), and acknowledges the
// writes only once that transaction is flushed to disk.
import { readFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { Metamodel } from '../src/model/metamodel'
import { Urls } from '../src/model/urls'
import { decodeRequests, encodeReplies } from '../src/shard/codec'
import { isStream, isWrite, type ActorConfig, type ActorReply, type ActorRequest, type Operation, type ReadOp, type StreamOp, type WriteOp } from '../src/shard/messages'
import { BlindIndex } from './crypto/blind-index'
import { createConsent, finishRevocations, grantConsent, readConsent, revokeConsent, setRevokedProperties } from './store/consents'
import { countNodes, deleteNode, getNode, getNodeProperty, putNode, putNodeProperty, type ShardContext } from './store/nodes'
import { deleteRelation, getRelation, incrementCounter, putRelation } from './store/relations'
import { fail, ok, type OpResult } from './store/result'
import { commitFailure } from './store/commit-failure'
import { causeOf } from '../src/storage-failure'
import { applyIsolated } from './store/isolated-write'
import { appendEvent, head, pruneEvents, readEvents, retention } from './store/events'
import { fireDue, nextDue } from './store/schedules'
import { ListScan, NeighboursScan, type Scan } from './store/scans'
import { closeShard, forgetUncommitted, openShard, shardPath, type ShardStore } from './store/shard-store'
import { ShardDamage, verifyShardFiles } from './store/shard-files'
import { verifyKeys } from './store/key-check'
import { migrateShard } from './store/migrate-shard'
import { createWebhook, deleteWebhook, listWebhooks, saveWebhookState, webhookDb, webhookTargets } from './store/webhooks'
import { deriveKey } from '../src/crypto/master-key'
import { now, useOffsetClockFromEnv } from '../src/clock'

const config = workerData as ActorConfig
// The front thread's clock (tests move it through CLOCK_OFFSET_FILE): timestamps, schedules and retention follow it.
useOffsetClockFromEnv(process.env, (p) => readFileSync(p, 'utf8'))
const port = parentPort
if (port === null) throw new Error('shard-actor must run in a worker thread')

const masterKey = Buffer.from(config.masterKey)

/**
 * Opens, checks and migrates one shard; finishes revocations a crash
 * interrupted. Damage throws ShardDamage before anything is served.
 */
function openVerified(shard: number): ShardStore {
  verifyShardFiles(shardPath(config.dataDir, shard), shard, config.existing)
  const store = openShard(config.dataDir, shard, masterKey)
  migrateShard(store, config.formatOnDisk, config.formatVersion)
  verifyKeys(store)
  const finished = finishRevocations(store)
  if (finished > 0) console.error(`shard ${shard}: finished ${finished} revocation(s) a crash had interrupted`)
  return store
}

const stores = new Map<number, ShardStore>()
try {
  for (const s of config.shards) stores.set(s, openVerified(s))
} catch (err) {
  const message = err instanceof ShardDamage ? err.message : `opening the shards failed: ${(err as Error).message}`
  port.postMessage(encodeReplies([{ kind: 'refused', id: 0, message }]))
  // In a worker thread this ends the thread, not the process; the pool stops the shard.
  process.exit(1)
}
const urls = new Urls(config.publicUrl)
const metamodel = new Metamodel(config.metamodel)
const blind = new BlindIndex(masterKey)
/** Seals the webhook secrets (workers/store/webhooks.ts). */
const webhookKey = deriveKey(masterKey, 'webhook secrets')
for (const store of stores.values()) webhookDb(store)
retention.maxCount = config.eventRetentionCount
const scans = new Map<number, { scan: Scan; store: ShardStore }>()
const pendingCommits = new Set<Promise<void>>()

let outbox: ActorReply[] = []
let flushScheduled = false
function send(reply: ActorReply): void {
  outbox.push(reply)
  if (!flushScheduled) {
    flushScheduled = true
    setImmediate(flushOutbox)
  }
}
function flushOutbox(): void {
  flushScheduled = false
  const batch = outbox
  outbox = []
  if (batch.length === 0) return
  try {
    port!.postMessage(encodeReplies(batch))
  } catch {
    // A reply structured clone refuses must not lose the others: one by one, the bad ones become errors.
    for (const r of batch) {
      try {
        port!.postMessage(encodeReplies([r]))
      } catch (err) {
        port!.postMessage(encodeReplies([internal(r.id, err)]))
      }
    }
  }
}

function reply(id: number, r: OpResult): ActorReply {
  return r.kind === 'ok'
    ? { kind: 'ok', id, status: r.status, body: r.body, total: r.total }
    : { kind: 'error', id, type: r.type, message: r.message }
}

function internal(id: number, err: unknown): ActorReply {
  console.error(`shard actor: request ${id} failed:`, err)
  return { kind: 'error', id, type: 'internal_error', message: 'internal error' }
}

function context(store: ShardStore, time: number): ShardContext {
  return { store, urls, metamodel, blind, now: time, touched: new Set(), schedulesChanged: false, shred: [] }
}

/** Wakes the front thread's event consumers for each tenant whose log grew. */
function announce(store: ShardStore, tenants: Iterable<string>): void {
  for (const tenant of tenants) send({ kind: 'events', id: 0, tenant, last: head(store, tenant).last })
}

/** Tells the front thread's webhook delivery which tenants' webhooks were created or deleted. */
function announceWebhookChanges(items: { op: WriteOp }[], results: OpResult[]): void {
  const tenants = new Set<string>()
  items.forEach(({ op }, n) => {
    if ((op.op === 'createWebhook' || op.op === 'deleteWebhook') && results[n]!.kind === 'ok') tenants.add(op.tenant)
  })
  for (const tenant of tenants) send({ kind: 'webhooks', id: 0, tenant })
}

function read(sc: ShardContext, op: ReadOp): OpResult {
  switch (op.op) {
    case 'getNode': return getNode(sc, op.tenant, op.node)
    case 'getNodeProperty': return getNodeProperty(sc, op.tenant, op.node, op.key)
    case 'countNodes': return countNodes(sc, op.tenant, op.ns, op.type)
    case 'getRelation': return getRelation(sc, op.tenant, op.relation)
    case 'getConsent': return readConsent(sc.store, op.tenant, op.ref, op.caller)
    case 'readEvents': {
      const r = readEvents(sc.store, op.tenant, op.after, op.limit)
      if (r.kind === 'expired') return fail('cursor_expired', `events up to ${r.first - 1} are no longer kept; read from after=${r.first - 1}`)
      return ok(200, `{"events":[${r.events.join(',')}],"next":${r.next}}`)
    }
    case 'eventHead': return ok(200, JSON.stringify(head(sc.store, op.tenant)))
    case 'listWebhooks': return listWebhooks(sc.store, op.tenant, op.id)
    case 'webhookTargets': return webhookTargets(sc.store, webhookKey, op.tenant)
  }
}

function write(sc: ShardContext, op: WriteOp): OpResult {
  switch (op.op) {
    case 'putNode': return putNode(sc, op.tenant, op.node, op.props, op.ctx)
    case 'putNodeProperty': return putNodeProperty(sc, op.tenant, op.node, op.key, op.value, op.ctx)
    case 'deleteNode': return deleteNode(sc, op.tenant, op.node, op.trace)
    case 'putRelation': return putRelation(sc, op.tenant, op.relation, op.props, op.ctx)
    case 'deleteRelation': return deleteRelation(sc, op.tenant, op.relation, op.trace)
    case 'incrementCounter': return incrementCounter(sc, op.tenant, op.relation, op.name, op.ctx)
    case 'createConsent': return createConsent(sc.store, op.tenant, op.subject, sc.now)
    case 'appendEvents': {
      for (const e of op.events) appendEvent(sc.store, op.tenant, e.operation, e.schema, e.payload, undefined, sc.now)
      sc.touched.add(op.tenant)
      return ok(204)
    }
    case 'revokeConsent': return revokeConsent(sc.store, op.tenant, op.ref, op.caller, sc.shred)
    case 'grantConsent': return grantConsent(sc.store, op.tenant, op.ref, op.caller)
    case 'setRevokedProperties': return setRevokedProperties(sc.store, op.tenant, op.ref, op.names, op.caller)
    case 'createWebhook': return createWebhook(sc.store, webhookKey, op.tenant, op.url, sc.now)
    case 'deleteWebhook': return deleteWebhook(sc.store, op.tenant, op.id)
    case 'webhookProgress': return saveWebhookState(sc.store, op.tenant, op.id, op.state)
  }
}

function stepScan(id: number): void {
  const open = scans.get(id)
  if (open === undefined) return
  try {
    const slice = open.scan.step(context(open.store, now()))
    if (slice.done) scans.delete(id)
    send({ kind: 'chunks', id, chunks: slice.chunks, done: slice.done })
  } catch (err) {
    scans.delete(id)
    send(internal(id, err))
  }
}

function openScan(id: number, store: ShardStore, op: StreamOp): void {
  const sc = context(store, now())
  if (op.op === 'neighbours') {
    const scan = new NeighboursScan(op.tenant, op.node)
    if (!scan.sourceExists(sc)) {
      send(reply(id, fail('element_not_found', `node ${op.node.ns}/${op.node.type}/${op.node.id} not found`)))
      return
    }
    scans.set(id, { scan, store })
  } else {
    scans.set(id, { scan: new ListScan(op.tenant, op.ns, op.type, op.limit, op.owner, op.criterion), store })
  }
  stepScan(id)
}

/** A write of the batch, rolled back alone if it throws (store/isolated-write.ts). */
function applyAlone(sc: ShardContext, item: { id: number; op: WriteOp }): OpResult {
  const shredBefore = sc.shred.length
  return applyIsolated(sc.store, () => write(sc, item.op), () => { sc.shred.length = shredBefore }, `write ${item.id} (${item.op.op})`)
}

/** One write transaction for all writes of a shard in this batch; replies after the flush. */
function commit(store: ShardStore, items: { id: number; op: WriteOp }[], time: number): void {
  const sc = context(store, time)
  const done = store.env
    .transaction(() => items.map((i) => applyAlone(sc, i)))
    .then(async (results) => {
      await store.env.flushed
      // Crypto-shredding after the revocation is durable (consents.ts says why the order).
      for (const slot of sc.shred) store.keys.destroy(slot)
      results.forEach((r, n) => send(reply(items[n]!.id, r)))
      announce(store, sc.touched)
      announceWebhookChanges(items, results)
      if (sc.schedulesChanged) scheduleTimer()
    })
    .catch(async (err: unknown) => {
      forgetUncommitted(store)
      const cause = await causeOf(err)
      console.error(`shard actor: commit of ${items.length} writes to shard ${store.shard} failed:`, cause)
      const failure = commitFailure(cause)
      for (const i of items) send(reply(i.id, failure))
    })
    .finally(() => pendingCommits.delete(done))
  pendingCommits.add(done)
}

// Scheduled events: one timer for the earliest due schedule of all shards.
let timer: NodeJS.Timeout | undefined
let timerAt = Number.POSITIVE_INFINITY
const MAX_SLEEP_MS = 60_000

function scheduleTimer(): void {
  let due = Number.POSITIVE_INFINITY
  for (const store of stores.values()) due = Math.min(due, nextDue(store) ?? Number.POSITIVE_INFINITY)
  const at = Math.min(due, now() + MAX_SLEEP_MS)
  if (timer !== undefined && at >= timerAt) return
  if (timer !== undefined) clearTimeout(timer)
  timerAt = at
  timer = setTimeout(fireSchedules, Math.max(0, at - now()))
}

function fireSchedules(): void {
  timer = undefined
  timerAt = Number.POSITIVE_INFINITY
  const t = now()
  const work = [...stores.values()].map((store) => {
    let tenants = new Set<string>()
    return store.env.transaction(() => { tenants = fireDue(store, t) })
      .then(() => store.env.flushed)
      .then(() => announce(store, tenants), (err: unknown) => {
        forgetUncommitted(store)
        throw err
      })
  })
  void Promise.all(work).catch((err: unknown) => console.error('shard actor: firing schedules failed:', err)).finally(() => {
    flushOutbox()
    scheduleTimer()
  })
}

// Retention: drop old events once a minute.
const pruner = setInterval(() => {
  const cutoff = now() - config.eventRetentionMs
  for (const store of stores.values()) {
    void store.env.transaction(() => pruneEvents(store, cutoff, config.eventRetentionCount))
      .catch((err: unknown) => {
        forgetUncommitted(store)
        console.error('shard actor: pruning events failed:', err)
      })
  }
}, 60_000)
pruner.unref()

// Schedules due while the server was down fire right after the start.
scheduleTimer()
port.postMessage(encodeReplies([{ kind: 'started', id: 0 }]))

async function shutdown(id: number): Promise<void> {
  if (timer !== undefined) clearTimeout(timer)
  clearInterval(pruner)
  await Promise.all(pendingCommits)
  flushOutbox()
  for (const store of stores.values()) await closeShard(store)
  port!.postMessage(encodeReplies([{ kind: 'closed', id }]))
}

// A rejection nobody awaits (lmdb-js's commitError of a failed background
// commit, say) must not kill the actor and every shard it owns: log it.
process.on('unhandledRejection', (reason) => console.error('shard actor: unhandled rejection:', reason))

port.on('messageerror', (err) => console.error('shard actor: a request batch could not be read:', err))

port.on('message', (wire: unknown) => {
  const t = now()
  const writes = new Map<ShardStore, { id: number; op: WriteOp }[]>()
  for (const req of decodeRequests(wire)) {
    try {
      if (take(req, t, writes) === 'shutdown') return
    } catch (err) {
      send(internal(req.id, err))
    }
  }
  for (const [store, items] of writes) commit(store, items, t)
})

/** Sorts one request of a batch: writes are collected for the group commit, the rest run at once. */
function take(req: ActorRequest, t: number, writes: Map<ShardStore, { id: number; op: WriteOp }[]>): 'shutdown' | undefined {
  switch (req.kind) {
    case 'more': stepScan(req.id); break
    case 'cancel': scans.delete(req.id); break
    case 'shutdown': void shutdown(req.id); return 'shutdown'
    case 'call': {
      const store = stores.get(req.shard)
      const op: Operation = req.operation
      if (store === undefined) {
        send(internal(req.id, new Error(`shard ${req.shard} is not owned by this actor`)))
      } else if (isWrite(op)) {
        const list = writes.get(store)
        if (list === undefined) writes.set(store, [{ id: req.id, op }])
        else list.push({ id: req.id, op })
      } else if (isStream(op)) {
        openScan(req.id, store, op)
      } else {
        send(reply(req.id, read(context(store, t), op)))
      }
    }
  }
  return undefined
}
