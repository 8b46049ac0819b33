// A shard actor: a long-lived worker thread that owns the LMDB environments
// of its shards (their one writer) and reads the other actors' shards too
// (actor/readers.ts). This file is its message loop: requests of one message are
// sorted into reads (answered at once), streams (actor/streams.ts) and
// writes, which run per shard in one group commit (actor/group-commit.ts).
import { readFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { Metamodel } from '../src/model/metamodel'
import { Urls } from '../src/contract/urls'
import { decodeRequests, encodeReplies } from '../src/contract/codec'
import type { ActorConfig, ActorRequest } from '../src/contract/messages'
import { deriveKey } from '../src/crypto/master-key'
import { readKekFile } from '../src/crypto/kek-file'
import { now, useOffsetClockFromEnv } from '../src/core/clock'
import { BlindIndex } from './crypto/blind-index'
import { GroupCommit, type WriteItem } from './actor/group-commit'
import { asStream, kindOf, operationTable, runOperation, runTask } from './actor/operations'
import { openShards } from './actor/open-shards'
import { LocalJournals, type Journaled } from './actor/local-journal'
import { Readers } from './actor/readers'
import { internal, Outbox, reply } from './actor/outbox'
import { Streams } from './actor/streams'
import { Timers } from './actor/timers'
import { logInfo, logThrough, logWarning } from './actor/log'
import { ActorStats, STATS_INTERVAL_MS } from './actor/stats'
import { head } from './store/events'
import type { ShardContext } from './store/context'
import { ShardDamage } from './store/shard-files'
import { closeShard, type ShardStore } from './store/shard-store'
import { webhookDb } from './store/webhooks'
import { useWriteGenerations } from './store/write-generations'
import { observeWrites } from './store/kept-reads'
import { shredKeys } from './store/shred-keys'
import { ShardUnavailable } from './store/unavailable'
import type { Replication } from './actor/replication/start'
import { hostUrlOf } from '../src/config/cluster-options'
import { startTraces, stopTraces } from '../src/telemetry/traces'

const config = workerData as ActorConfig
// The front thread's clock (tests move it through CLOCK_OFFSET_FILE): timestamps, schedules and retention follow it.
useOffsetClockFromEnv(process.env, (p) => readFileSync(p, 'utf8'))
const port = parentPort
if (port === null) throw new Error('shard-actor must run in a worker thread')

const masterKey = Buffer.from(config.masterKey)
// Cluster mode wraps data keys under the KEK every host is given, so that any host opens what another granted (docs/design/replication.md).
const wrapping = config.cluster === undefined ? masterKey : readKekFile(config.cluster.kekFile)
const shredTarget = { path: config.shredLog, generation: config.generation }
// Before any shard opens: its writer counts commits in the pool's shared counters.
useWriteGenerations(config.writeGenerations)
// Before any shard opens too: what opening says (a restore applied, revocations finished, lmdb-js) goes to the one JSON log.
const outbox = new Outbox(port)
logThrough((r) => outbox.send(r))
let stores: Map<number, ShardStore>
// Without cluster mode each shard has a local journal in front of its LMDB (actor/local-journal.ts); cluster mode's log is the stream.
const journaled = config.cluster === undefined ? new Map<ShardStore, Journaled>() : undefined
try {
  stores = openShards(config, masterKey, wrapping, journaled)
} catch (err) {
  const message = err instanceof ShardDamage ? err.message : `opening the shards failed: ${(err as Error).message}`
  outbox.flush()
  port.postMessage(encodeReplies([{ kind: 'refused', id: 0, message }]))
  // In a worker thread this ends the thread, not the process; the pool stops the shard.
  process.exit(1)
}
for (const store of stores.values()) webhookDb(store)
const journals = journaled === undefined ? undefined : new LocalJournals(journaled)

const urls = new Urls(config.publicUrl)
const metamodel = new Metamodel(config.metamodel)
const blind = new BlindIndex(masterKey)
const operations = operationTable(deriveKey(masterKey, 'webhook secrets'))
const stats = new ActorStats()
const reportStats = setInterval(() => outbox.send({ kind: 'stats', id: 0, shards: stats.take(stores.values(), (store) => journaled?.get(store)?.journal) }), STATS_INTERVAL_MS)
reportStats.unref()

function context(store: ShardStore, time: number): ShardContext {
  return { store, urls, metamodel, blind, now: time, touched: new Set(), schedulesChanged: false, shred: [] }
}

/** Wakes the front thread's event consumers for each tenant whose log grew. */
function eventsAppended(store: ShardStore, tenants: Iterable<string>): void {
  for (const tenant of tenants) outbox.send({ kind: 'events', id: 0, tenant, last: head(store, tenant).last })
}

/** Cluster mode: the shards this actor serves now (their leases held and caught up). */
const servedHere = new Set<number>()
// Cluster mode only (a dynamic import: on one machine no NATS module loads in the actor either).
const cluster = config.cluster
const replication: Promise<Replication> | undefined = cluster === undefined ? undefined : import('./actor/replication/start').then((m) => m.startReplication(cluster, hostUrlOf(cluster, config.publicUrl), stores, {
  ownership: (shard, owned, epoch) => {
    if (owned) servedHere.add(shard)
    else servedHere.delete(shard)
    outbox.send({ kind: 'ownership', id: 0, shard, owned, epoch })
    // A shard gained may have schedules due.
    if (owned) timers.schedule()
  },
  destroyKeys: (store, slots) => shredKeys(store, shredTarget, slots),
  warn: logWarning,
  info: logInfo,
}))
replication?.catch((err: unknown) => console.error('shard actor: cluster replication did not start; its shards are not served:', err))
const replicated = async (): Promise<Replication> => {
  try {
    return await replication!
  } catch {
    throw new ShardUnavailable('cluster replication is not running on this host', Math.ceil(cluster!.leaseMs / 1000))
  }
}

const readers = new Readers(config, wrapping)
const streams = new Streams(outbox, context)
const timers = new Timers([...stores.values()], { maxAgeMs: config.eventRetentionMs, maxCount: config.eventRetentionCount }, eventsAppended, () => outbox.flush(),
  replication !== undefined ? { serves: (store) => servedHere.has(store.shard), write: async (store, fn) => (await replicated()).transact(store, fn) }
    : journals !== undefined ? { serves: () => true, write: (store, fn) => journals.transact(store, fn) } : undefined)
const commits = new GroupCommit(outbox, {
  context,
  run: (sc, op) => runOperation(operations, sc, op),
  eventsAppended,
  schedulesChanged: () => timers.schedule(),
  destroyKeys: (store, slots) => shredKeys(store, shredTarget, slots),
  measured: (shard, size, commitSeconds, flushSeconds) => stats.commit(shard, size, commitSeconds, flushSeconds),
  transact: replication === undefined ? undefined : async (store, run) => (await replicated()).transact(store, run),
  journal: journals === undefined ? undefined : { transact: (store, run) => journals.transact(store, run), beforeShred: (store) => journals.checkpoint(store) },
})

timers.schedule()
const started = (): void => port.postMessage(encodeReplies([{ kind: 'started', id: 0 }]))
// Traces on: the actor exports its commits' spans itself (docs/design/tracing.md), its SDK loaded before it says it started.
if (config.traces === undefined) started()
else {
  startTraces(config.traces, `shard actor (shards ${config.shards.join(', ')})`, (message) => logWarning(message, undefined)).then(started, (err: unknown) => {
    logWarning('shard actor: traces could not start; this actor exports none', err)
    started()
  })
}

/** Tasks under way (a backup's copy): the environments they read stay open until they end. */
const tasks = new Set<Promise<void>>()

async function shutdown(id: number): Promise<void> {
  timers.stop()
  clearInterval(reportStats)
  await commits.drain()
  await Promise.all(tasks)
  // A clean stop leaves no journal to replay: LMDB is synced and the segments removed.
  await journals?.close().catch((err: unknown) => console.error('shard actor: the last journal checkpoint failed (the next start replays the journal):', err))
  if (replication !== undefined) await (await replication.catch(() => undefined))?.close()
  outbox.flush()
  for (const store of stores.values()) await closeShard(store)
  await readers.close()
  await stopTraces()
  outbox.flush()
  port!.postMessage(encodeReplies([{ kind: 'closed', id }]))
}

/** Sorts one request of a message: writes are collected for the group commit, the rest run at once. */
function take(req: ActorRequest, time: number, writes: Map<ShardStore, WriteItem[]>): 'shutdown' | undefined {
  switch (req.kind) {
    case 'more': streams.step(req.id); break
    case 'cancel': streams.cancel(req.id); break
    case 'shutdown': void shutdown(req.id); return 'shutdown'
    case 'openReaders':
      readers.open(req.shards)
      outbox.send({ kind: 'ok', id: req.id, status: 204, body: undefined, total: undefined })
      break
    case 'forgetConsent':
      readers.forgetConsent(req.shard, req.tenant, req.ref)
      outbox.send({ kind: 'ok', id: req.id, status: 204, body: undefined, total: undefined })
      break
    case 'call': {
      const op = req.operation
      // Reads and scans of a shard another actor owns run here too, read-only.
      const store = stores.get(req.shard) ?? (kindOf(operations, op) === 'write' ? undefined : readers.get(req.shard))
      if (store === undefined) {
        outbox.send(internal(req.id, new Error(`shard ${req.shard} is not owned by this actor`)))
        break
      }
      switch (kindOf(operations, op)) {
        case 'write': {
          const item: WriteItem = req.trace === undefined ? { id: req.id, op } : { id: req.id, op, trace: req.trace }
          const list = writes.get(store)
          if (list === undefined) writes.set(store, [item])
          else list.push(item)
          break
        }
        case 'stream': streams.start(req.id, store, asStream(operations, op)!); break
        case 'read': outbox.send(reply(req.id, runOperation(operations, context(store, time), op))); break
        case 'task': {
          const id = req.id
          const task = runTask(operations, context(store, time), op).then((r) => outbox.send(reply(id, r)), (err: unknown) => outbox.send(internal(id, err)))
          tasks.add(task)
          void task.finally(() => tasks.delete(task))
        }
      }
    }
  }
  return undefined
}

// A rejection nobody awaits (lmdb-js's commitError of a failed background
// commit, say) must not kill the actor and every shard it owns: log it.
process.on('unhandledRejection', (reason) => console.error('shard actor: unhandled rejection:', reason))

port.on('messageerror', (err) => console.error('shard actor: a request batch could not be read:', err))

port.on('message', (wire: unknown) => {
  // Before the snapshots are renewed (kept-reads.ts says why the order).
  observeWrites(stores.keys())
  observeWrites(readers.shards())
  readers.renew()
  const time = now()
  const writes = new Map<ShardStore, WriteItem[]>()
  for (const req of decodeRequests(wire)) {
    try {
      if (take(req, time, writes) === 'shutdown') return
    } catch (err) {
      outbox.send(internal(req.id, err))
    }
  }
  for (const [store, items] of writes) commits.commit(store, items, time)
})
