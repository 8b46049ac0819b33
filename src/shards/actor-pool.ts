// The front thread's side of the shard actors: it owns the worker threads,
// routes each call to the actor that owns the tenant's shard, batches all
// calls of one event-loop turn into one message per actor, and restarts an
// actor that dies (its in-flight calls get 503; its shards are intact because
// every acknowledged write was flushed).
import { Worker, type ResourceLimits } from 'node:worker_threads'
import { join } from 'node:path'
import type { MetamodelDoc } from '../model/metamodel'
import { decodeReplies, encodeRequests } from '../contract/codec'
import type { ActorConfig, ActorReply, ActorRequest, Operation, StreamOp } from '../contract/messages'
import { actorOf, shardOf, shardsOfActor } from './tenant-hash'
import { consentChanged, leastLoaded, readsAnywhere } from './read-routing'
import { FORMAT_VERSION } from './manifest'
import { logActorRecord, recordShardStats } from './shard-stats'
import { log } from '../telemetry/log'
import type { RemoteShards } from './remote-shards'
import type { ClusterOptions } from '../config/cluster-options'
import { KeptAnswers } from './kept-answers'

export type ReplyHandler = ((reply: ActorReply) => void) & {
  /** true once nobody waits for the answer: a call not yet sent to its actor is then dropped, not applied. */
  abandoned?: () => boolean
  /** The request id of the HTTP request waiting for it (the actor's log records name it): built only when a record needs it. */
  requestId?: () => string
}

export interface PoolOptions {
  dataDir: string
  shardCount: number
  workerCount: number
  publicUrl: string
  metamodel: MetamodelDoc
  masterKey: Buffer
  eventRetentionMs?: number
  eventRetentionCount?: number
  /** The data directory existed before this start (every shard must have its files). */
  existing?: boolean
  /** The disk format the shards are in (they are migrated to FORMAT_VERSION as they open). */
  formatOnDisk?: number
  /** An actor that exits this many times within RESTART_WINDOW_MS is stopped, not restarted. */
  maxRestarts?: number
  /** Each actor thread's V8 old generation at most, MB (--actor-heap-mb); V8's own limit when undefined. */
  actorHeapMb?: number
  /** Compiled actor entry; defaults to dist/workers/shard-actor.js beside this file. */
  workerFile?: string
  /** Calls in flight per actor before new ones get 503. */
  maxPending?: number
  /** The shred log and the installation's generation (src/crypto/shred-log.ts); tests of the pool alone may leave them out. */
  shredLog?: string
  generation?: string
  /** A restored backup: the generation whose shred-log lines the shards apply at open. */
  restore?: { generation: string | undefined }
  /** Cluster mode (Config.cluster): shards are served only under their lease. */
  cluster?: ClusterOptions
}

const DEFAULT_WORKER_FILE = join(__dirname, '..', '..', 'workers', 'shard-actor.js')

const UNAVAILABLE = (id: number, message: string): ActorReply => ({ kind: 'error', id, type: 'service_unavailable', message })

/** The handle of a stream answered whole at once (a kept neighbourhood). */
const NO_STREAM: StreamHandle = { more: () => undefined, cancel: () => undefined }

const RESTART_WINDOW_MS = 60_000
const DEFAULT_MAX_RESTARTS = 5
/** How long ending a thread waits for its readers' open to finish. */
const READERS_OPEN_WAIT_MS = 30_000

class Actor {
  worker!: Worker
  readonly pending = new Map<number, ReplyHandler>()
  private outbox: ActorRequest[] = []
  private scheduled = false
  stopping = false
  /** Between the thread's `started` and its exit. */
  up = false
  restarts = 0
  /** Why the actor was stopped for good (its shards answer 503), or undefined while it runs. */
  stopped: string | undefined
  private recentExits: number[] = []
  /** This incarnation has opened the other actors' shards for reading (it may take their reads). */
  readersOpen = false
  /** Set while this incarnation opens the other shards for reading: a thread terminated inside LMDB's native open aborts the whole process. */
  openingReaders: Promise<void> | undefined

  constructor(readonly index: number, private readonly pool: ActorPool, private readonly config: ActorConfig) {
    this.spawn()
  }

  spawn(): void {
    const worker = new Worker(this.pool.workerFile, { workerData: this.config, resourceLimits: this.pool.resourceLimits })
    this.worker = worker
    this.readersOpen = false
    this.openingReaders = undefined
    worker.on('message', (wire: unknown) => {
      for (const reply of decodeReplies(wire)) {
        if (reply.kind === 'events') {
          this.pool.eventsAppended(reply.tenant, reply.last)
          continue
        }
        if (reply.kind === 'webhooks') {
          this.pool.webhooksChanged(reply.tenant)
          continue
        }
        if (reply.kind === 'stats') {
          recordShardStats(reply.shards)
          continue
        }
        if (reply.kind === 'ownership') {
          this.pool.ownershipChanged(reply.shard, reply.owned, reply.epoch)
          continue
        }
        if (reply.kind === 'log') {
          logActorRecord(this.index, reply, (call) => this.pending.get(call)?.requestId?.())
          continue
        }
        if (reply.kind === 'started') {
          this.up = true
          this.pool.actorStarted(this.index)
          continue
        }
        if (reply.kind === 'refused') {
          this.stop(reply.message)
          continue
        }
        const handler = this.pending.get(reply.id)
        if (handler === undefined) continue
        if (reply.kind !== 'chunks' || reply.done) this.pending.delete(reply.id)
        // A handler that throws must not take the other replies, or the process, with it.
        try {
          handler(reply)
        } catch (err) {
          log.error({ err, actor: this.index, requestId: handler.requestId?.() }, `shard actor ${this.index}: handling the reply to request ${reply.id} failed`)
        }
      }
    })
    // A reply that cannot be deserialized: its request stays pending until the actor restarts or shuts down.
    worker.on('messageerror', (err) => log.error({ err, actor: this.index }, `shard actor ${this.index}: a reply could not be read`))
    worker.on('error', (err) => {
      const outOfHeap = (err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY'
      log.error({ err, actor: this.index }, outOfHeap ? `shard actor ${this.index} ran out of its heap (--actor-heap-mb ${this.pool.resourceLimits?.maxOldGenerationSizeMb ?? 'unset'})` : `shard actor ${this.index} crashed`)
    })
    worker.on('exit', (code) => {
      if (this.worker !== worker) return
      this.up = false
      // A shard whose actor is down answers as it (a 503 now, or after a restart what the restarted writer reads), not from memory.
      this.pool.actorExited()
      // Everything in flight, and everything queued for the dead thread, gets a 503.
      const lost = [...this.pending.entries()]
      this.pending.clear()
      this.outbox = []
      const why = this.stopped === undefined ? 'the shard actor restarted; retry the request' : this.unavailable()
      for (const [id, handler] of lost) handler(UNAVAILABLE(id, why))
      // A dead actor serves nothing: its leases lapse (cluster mode).
      for (const shard of this.config.shards) this.pool.ownershipChanged(shard, false, 0)
      if (this.stopping || this.stopped !== undefined) return
      // A budget, not a loop: an actor that keeps dying (a damaged file, a
      // full disk at open) is stopped with its reason instead of restarted forever.
      const t = Date.now()
      this.recentExits = [...this.recentExits.filter((at) => t - at < RESTART_WINDOW_MS), t]
      if (this.recentExits.length > this.pool.maxRestarts) {
        this.stop(`it exited ${this.recentExits.length} times within ${RESTART_WINDOW_MS / 1000} s (last exit code ${code})`)
        return
      }
      this.restarts++
      log.warn({ actor: this.index }, `shard actor ${this.index} exited with code ${code}; restarting`)
      this.spawn()
    })
  }

  /** Stops the actor for good: its shards answer 503 with the reason, which is logged once. */
  stop(reason: string): void {
    if (this.stopped !== undefined) return
    this.stopped = reason
    log.error({ actor: this.index }, `shard actor ${this.index} stopped, its shards answer 503: ${reason}`)
    this.pool.actorRefused(this.index, reason)
    void this.terminate()
  }

  /** Ends the thread, but never inside the readers' open (bounded: a hung open is terminated after READERS_OPEN_WAIT_MS). */
  async terminate(): Promise<void> {
    const worker = this.worker
    const opening = this.openingReaders
    if (opening !== undefined) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([opening, new Promise<void>((resolve) => { timer = setTimeout(resolve, READERS_OPEN_WAIT_MS) })])
      clearTimeout(timer)
    }
    await worker.terminate()
  }

  unavailable(): string {
    return `this tenant's shard is stopped (${this.stopped ?? ''}); an operator must repair it and restart the server`
  }

  send(req: ActorRequest, handler: ReplyHandler | undefined): void {
    if (this.stopped !== undefined) {
      handler?.(UNAVAILABLE(req.id, this.unavailable()))
      return
    }
    if (handler !== undefined) this.pending.set(req.id, handler)
    this.outbox.push(req)
    if (!this.scheduled) {
      this.scheduled = true
      // setImmediate, not a microtask: uWebSockets.js drains microtasks after
      // every request, which would send batches of one.
      setImmediate(() => this.flush())
    }
  }

  flush(): void {
    this.scheduled = false
    if (this.outbox.length === 0) return
    const batch = this.outbox.filter((req) => !this.dropAbandoned(req))
    this.outbox = []
    if (batch.length === 0) return
    try {
      this.worker.postMessage(encodeRequests(batch))
    } catch {
      // Structured clone refused the batch (a value nested too deep for the
      // stack, say): send the requests one by one so only the bad ones fail.
      for (const req of batch) this.sendAlone(req)
    }
  }

  private dropAbandoned(req: ActorRequest): boolean {
    if (req.kind !== 'call') return false
    if (this.pending.get(req.id)?.abandoned?.() !== true) return false
    this.pending.delete(req.id)
    return true
  }

  private sendAlone(req: ActorRequest): void {
    try {
      this.worker.postMessage(encodeRequests([req]))
    } catch (err) {
      log.error({ err, actor: this.index, requestId: this.pending.get(req.id)?.requestId?.() }, `shard actor ${this.index}: request ${req.id} could not be passed to the actor`)
      const handler = this.pending.get(req.id)
      this.pending.delete(req.id)
      handler?.({ kind: 'error', id: req.id, type: 'bad_request', message: 'the request could not be passed to its shard: its body is too deeply nested or not serializable' })
    }
  }
}

/** A shard that could not be opened (damaged files, a missing key); the message says what to do. */
export class ShardRefused extends Error {}

/** The handle of an open stream: ask for the next slice, or stop the scan. */
export interface StreamHandle {
  more(): void
  cancel(): void
}

export class ActorPool {
  readonly workerFile: string
  readonly resourceLimits: ResourceLimits | undefined
  private readonly actors: Actor[]
  private nextId = 1
  private readonly maxPending: number
  readonly maxRestarts: number
  private readonly startedActors = new Set<number>()
  private startWaiters: { resolve: () => void; reject: (err: Error) => void }[] = []
  private refusal: string | undefined
  /** Single answers and whole neighbourhoods kept on this thread (single machine only: kept-answers.ts). */
  private readonly keptAnswers: KeptAnswers | undefined

  constructor(private readonly options: PoolOptions) {
    this.workerFile = options.workerFile ?? DEFAULT_WORKER_FILE
    this.resourceLimits = options.actorHeapMb === undefined ? undefined : { maxOldGenerationSizeMb: options.actorHeapMb }
    this.maxPending = options.maxPending ?? 20_000
    this.maxRestarts = options.maxRestarts ?? DEFAULT_MAX_RESTARTS
    this.actors = []
    // One write counter per shard, shared by the actors (workers/store/write-generations.ts).
    const writeGenerations = new Int32Array(new SharedArrayBuffer(4 * options.shardCount))
    this.keptAnswers = options.cluster === undefined ? new KeptAnswers(writeGenerations) : undefined
    for (let a = 0; a < options.workerCount; a++) {
      this.actors.push(new Actor(a, this, {
        dataDir: options.dataDir,
        shards: shardsOfActor(a, options.workerCount, options.shardCount),
        publicUrl: options.publicUrl,
        metamodel: options.metamodel,
        masterKey: options.masterKey,
        eventRetentionMs: options.eventRetentionMs ?? 7 * 86_400_000,
        eventRetentionCount: options.eventRetentionCount ?? 1_000_000,
        existing: options.existing ?? false,
        formatOnDisk: options.formatOnDisk ?? FORMAT_VERSION,
        formatVersion: FORMAT_VERSION,
        shredLog: options.shredLog ?? join(options.dataDir, '..', 'shred.log'),
        generation: options.generation ?? 'unset',
        restore: options.restore,
        cluster: options.cluster,
        writeGenerations,
      }))
    }
  }

  /**
   * Resolves once every actor opened and verified its shards; rejects with
   * the first refusal (a damaged shard), which start-up reports and exits on.
   */
  started(): Promise<void> {
    if (this.refusal !== undefined) return Promise.reject(new ShardRefused(this.refusal))
    if (this.startedActors.size === this.actors.length) return Promise.resolve()
    return new Promise((resolve, reject) => this.startWaiters.push({ resolve, reject }))
  }

  /** Whether every running actor has opened the other actors' shards for reading (tests wait for it before killing actors). */
  allReadersOpen(): boolean {
    return this.actors.every((a) => a.readersOpen || a.stopped !== undefined)
  }

  /** @internal */
  actorStarted(index: number): void {
    this.startedActors.add(index)
    if (this.startedActors.size < this.actors.length) return
    for (const w of this.startWaiters.splice(0)) w.resolve()
    // Every owner has opened and migrated its shards: now the others may open them for reading
    // (and an actor that restarts later, once it has started again).
    for (const actor of this.actors) if (!actor.readersOpen && actor.stopped === undefined) this.openReaders(actor)
  }

  private readonly readersAsked = new WeakSet<Worker>()

  /** Asks one actor incarnation to open every shard it does not own; it takes reads once it has. */
  private openReaders(actor: Actor): void {
    const worker = actor.worker
    if (this.readersAsked.has(worker)) return
    this.readersAsked.add(worker)
    const shards: number[] = []
    for (let s = 0; s < this.options.shardCount; s++) if (actorOf(s, this.options.workerCount) !== actor.index) shards.push(s)
    let opened!: () => void
    actor.openingReaders = new Promise<void>((resolve) => { opened = resolve })
    worker.once('exit', () => opened())
    actor.send({ kind: 'openReaders', id: this.nextId++, shards }, (reply) => {
      opened()
      if (actor.worker === worker) actor.openingReaders = undefined
      if (reply.kind === 'ok' && actor.worker === worker) actor.readersOpen = true
      else if (reply.kind === 'error') log.error({ actor: actor.index }, `shard actor ${actor.index}: opening the other shards for reading failed: ${reply.message}`)
    })
  }

  private turn = 0
  /** Reused per read (no allocation per request): each actor's calls in flight, Infinity where it cannot read. */
  private readonly loads: number[] = []

  /**
   * The actor that answers a read of a shard: the least busy of those that
   * can (the owner, and every running actor that opened the shard for
   * reading); the owner alone when it is stopped, so the read gets its 503.
   */
  private reader(owner: Actor): Actor {
    if (owner.stopped !== undefined) return owner
    const { actors, loads } = this
    for (let i = 0; i < actors.length; i++) {
      const a = actors[i]!
      loads[i] = a === owner || (a.readersOpen && a.stopped === undefined) ? a.pending.size : Number.POSITIVE_INFINITY
    }
    this.turn = (this.turn + 1) % actors.length
    return actors[leastLoaded(loads, this.turn)]!
  }

  /**
   * Runs `done` once every actor but the owner has dropped what it cached of
   * the consent (an actor that exits or is stopped holds nothing any more:
   * its 503 counts as done).
   */
  private forgetEverywhere(owner: Actor, shard: number, tenant: string, ref: string, done: () => void): void {
    // What this thread kept of the shard goes last: a reader may have answered from its cached consent until it dropped it.
    const forgotten = (): void => {
      this.keptAnswers?.forgetShard(shard)
      done()
    }
    const others = this.actors.filter((a) => a !== owner)
    let left = others.length
    if (left === 0) {
      forgotten()
      return
    }
    for (const actor of others) {
      actor.send({ kind: 'forgetConsent', id: this.nextId++, shard, tenant, ref }, () => {
        if (--left === 0) forgotten()
      })
    }
  }

  /** @internal An actor thread exited: nothing kept on this thread is served until its shards answer again. */
  actorExited(): void {
    this.keptAnswers?.forgetAll()
  }

  /** @internal */
  actorRefused(_index: number, reason: string): void {
    this.refusal ??= reason
    for (const w of this.startWaiters.splice(0)) w.reject(new ShardRefused(reason))
  }

  private route(tenant: string): { actor: Actor; shard: number } {
    const shard = shardOf(tenant, this.options.shardCount)
    return { actor: this.actors[actorOf(shard, this.options.workerCount)]!, shard }
  }

  /** Cluster mode: where the shards this host does not own are answered; undefined on one machine. */
  remote: RemoteShards | undefined

  /** The shard that holds the tenant's data. */
  shardOf(tenant: string): number {
    return shardOf(tenant, this.options.shardCount)
  }

  /** Whether this host's actors serve the tenant now (always on one machine; in a cluster, while they own its shard). */
  servesHere(tenant: string): boolean {
    return this.remote?.elsewhere(shardOf(tenant, this.options.shardCount)) !== true
  }

  /** One request, one reply. A full queue answers 503 at once. */
  call(tenant: string, operation: Operation, handler: ReplyHandler): void {
    const shard = shardOf(tenant, this.options.shardCount)
    if (this.remote?.elsewhere(shard) === true) this.remote.call(shard, tenant, operation, handler)
    else this.callHere(tenant, operation, handler)
  }

  /** A call answered by this host's actors whoever owns the shard (a forwarded call, checked by its receiver). */
  callHere(tenant: string, operation: Operation, handler: ReplyHandler): void {
    const { actor: owner, shard } = this.route(tenant)
    const keptKey = this.keptAnswers === undefined ? undefined : KeptAnswers.keyOf(operation)
    if (keptKey !== undefined) {
      const body = this.keptAnswers!.find(shard, keptKey)
      if (typeof body === 'string') {
        handler({ kind: 'ok', id: 0, status: 200, body, total: undefined, kept: undefined })
        return
      }
      if (this.keptAnswers!.wantedAgain(keptKey)) handler = this.keeping(shard, keptKey, handler)
    }
    // In cluster mode only the owning actor reads: the other threads' consent caches do not see what a standby applied.
    const actor = readsAnywhere(operation) && this.options.cluster === undefined ? this.reader(owner) : owner
    const id = this.nextId++
    if (actor.pending.size >= this.maxPending) {
      handler(UNAVAILABLE(id, 'the shard is overloaded; retry later'))
      return
    }
    const changed = consentChanged(operation)
    if (changed === undefined) {
      actor.send({ kind: 'call', id, shard, operation }, handler)
      return
    }
    // A consent change is answered only after no thread holds a cached view of it that it would contradict.
    // Failures too: a 503 of an owner that died after its commit, or a revocation whose key could not yet be
    // destroyed, may follow a committed change.
    const afterForget: ReplyHandler = (reply) => this.forgetEverywhere(owner, shard, changed.tenant, changed.ref, () => handler(reply))
    afterForget.abandoned = handler.abandoned
    afterForget.requestId = handler.requestId
    actor.send({ kind: 'call', id, shard, operation }, afterForget)
  }

  /** `handler`, after keeping a stamped single answer (kept-answers.ts) as text. */
  private keeping(shard: number, key: string, handler: ReplyHandler): ReplyHandler {
    const kept = this.keptAnswers!
    const keeping: ReplyHandler = (reply) => {
      if (reply.kind === 'ok' && reply.kept !== undefined && reply.body !== undefined) kept.keep(shard, key, reply.body, reply.kept)
      handler(reply)
    }
    keeping.abandoned = handler.abandoned
    keeping.requestId = handler.requestId
    return keeping
  }

  /**
   * `handler`, gathering a neighbourhood's slices to keep the whole as the
   * bytes it then writes, if its last slice says it may be kept. Only one
   * stream of a key gathers at a time, and what all of them gather is
   * bounded (KeptAnswers.gather); `stop` ends the gathering of a stream
   * cancelled before its last slice.
   */
  private keepingStream(shard: number, key: string, handler: ReplyHandler): { handler: ReplyHandler; stop: () => void } {
    const kept = this.keptAnswers!
    let slices: Uint8Array[] | undefined = kept.startGathering(key) ? [] : undefined
    const stop = (): void => {
      if (slices !== undefined) kept.stopGathering(key)
      slices = undefined
    }
    const keeping: ReplyHandler = (reply) => {
      if (reply.kind !== 'chunks') {
        stop()
        handler(reply)
        return
      }
      // The bytes are made here once, and written as they are.
      const bytes = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body
      if (slices !== undefined && !kept.gather(key, bytes.length)) slices = undefined
      if (slices !== undefined && !reply.done) slices.push(bytes)
      if (slices !== undefined && reply.done) {
        const whole = slices.length === 0 ? bytes : Buffer.concat([...slices, bytes])
        stop()
        if (reply.kept !== undefined) kept.keep(shard, key, whole, reply.kept)
      }
      handler({ kind: 'chunks', id: reply.id, body: bytes, done: reply.done, kept: reply.kept })
    }
    keeping.abandoned = handler.abandoned
    keeping.requestId = handler.requestId
    return { handler: keeping, stop }
  }

  /**
   * A stream: the handler gets a `chunks` reply per slice (or one error). The
   * actor reads the next slice only after `more()`, which is how back-pressure
   * reaches the scan; `cancel()` stops it.
   */
  openStream(tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle {
    const shard = shardOf(tenant, this.options.shardCount)
    if (this.remote?.elsewhere(shard) === true) return this.remote.openStream(shard, tenant, operation, handler)
    return this.openStreamHere(tenant, operation, handler)
  }

  /** A stream read by this host's actors (a forwarded stream, checked by its receiver). */
  openStreamHere(tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle {
    const { actor: owner, shard } = this.route(tenant)
    const keptKey = this.keptAnswers === undefined ? undefined : KeptAnswers.streamKeyOf(operation)
    if (keptKey !== undefined) {
      const body = this.keptAnswers!.find(shard, keptKey)
      if (body !== undefined) {
        handler({ kind: 'chunks', id: 0, body, done: true, kept: undefined })
        return NO_STREAM
      }
    }
    const keeping = keptKey !== undefined && this.keptAnswers!.wantedAgain(keptKey) ? this.keepingStream(shard, keptKey, handler) : undefined
    if (keeping !== undefined) handler = keeping.handler
    const actor = this.reader(owner)
    const id = this.nextId++
    if (actor.pending.size >= this.maxPending) {
      handler(UNAVAILABLE(id, 'the shard is overloaded; retry later'))
      return NO_STREAM
    }
    actor.send({ kind: 'call', id, shard, operation }, handler)
    return {
      more: () => { if (actor.pending.has(id)) actor.send({ kind: 'more', id }, undefined) },
      cancel: () => {
        keeping?.stop()
        if (!actor.pending.delete(id)) return
        actor.send({ kind: 'cancel', id }, undefined)
      },
    }
  }

  private readonly eventListeners = new Set<(tenant: string, last: number) => void>()

  /** Called whenever a tenant's event log grows (long-polls, streams and webhooks wait on it). */
  onEvents(listener: (tenant: string, last: number) => void): () => void {
    this.eventListeners.add(listener)
    return () => this.eventListeners.delete(listener)
  }

  /** @internal from an actor's unsolicited `events` message */
  eventsAppended(tenant: string, last: number): void {
    for (const listener of this.eventListeners) listener(tenant, last)
  }

  private readonly owned = new Map<number, number>()
  private readonly ownershipListeners = new Set<(shard: number, owned: boolean, epoch: number) => void>()

  /** Whether this host's actors serve the shard: always in the single-machine mode, under a valid lease in cluster mode. */
  ownedLocally(shard: number): boolean {
    return this.options.cluster === undefined || this.owned.has(shard)
  }

  /** Called whenever a local actor gains or loses a shard's lease (cluster mode). */
  onOwnership(listener: (shard: number, owned: boolean, epoch: number) => void): () => void {
    this.ownershipListeners.add(listener)
    return () => this.ownershipListeners.delete(listener)
  }

  /** @internal from an actor's unsolicited `ownership` message, or an actor's exit (its shards are then not owned). */
  ownershipChanged(shard: number, owned: boolean, epoch: number): void {
    if (owned) this.owned.set(shard, epoch)
    else if (!this.owned.delete(shard)) return
    for (const listener of this.ownershipListeners) listener(shard, owned, epoch)
  }

  private readonly webhookListeners = new Set<(tenant: string) => void>()

  /** Called after a tenant's webhooks were created or deleted (webhook delivery reloads them). */
  onWebhooksChanged(listener: (tenant: string) => void): () => void {
    this.webhookListeners.add(listener)
    return () => this.webhookListeners.delete(listener)
  }

  /** @internal from an actor's unsolicited `webhooks` message */
  webhooksChanged(tenant: string): void {
    for (const listener of this.webhookListeners) listener(tenant)
  }

  /** One call to every shard (an operation over all tenants of a shard); the handler gets each shard's reply. */
  callEveryShard(operation: Operation, handler: (shard: number, reply: ActorReply) => void): void {
    for (let shard = 0; shard < this.options.shardCount; shard++) {
      const actor = this.actors[actorOf(shard, this.options.workerCount)]!
      const id = this.nextId++
      actor.send({ kind: 'call', id, shard, operation }, (reply) => handler(shard, reply))
    }
  }

  /** The actors not serving now (stopped, or restarting), each with why; empty when all are up. */
  actorsDown(): string[] {
    return this.actors.filter((a) => !a.up || a.stopped !== undefined).map((a) => `actor ${a.index}: ${a.stopped ?? 'starting or restarting'}`)
  }

  /** Calls waiting for their reply, per actor (the queue depth). */
  queueDepths(): number[] {
    return this.actors.map((a) => a.pending.size)
  }

  /** The worker threads (tests kill them to prove restarts). */
  workers(): Worker[] {
    return this.actors.map((a) => a.worker)
  }

  restartCount(): number {
    return this.actors.reduce((n, a) => n + a.restarts, 0)
  }

  /** Waits for pending commits, closes every environment and stops the threads. */
  async close(): Promise<void> {
    await Promise.all(this.actors.map((actor) => new Promise<void>((resolve) => {
      actor.stopping = true
      const id = this.nextId++
      const timer = setTimeout(() => void actor.terminate().then(() => resolve()), 10_000)
      actor.send({ kind: 'shutdown', id }, () => {
        clearTimeout(timer)
        void actor.terminate().then(() => resolve())
      })
    })))
  }
}
