// The front thread's side of the shard actors, as the rest of the code uses
// it: a call or stream goes to the actor that answers it (shard-router.ts),
// through that actor's handle, which batches one event-loop turn's requests
// (actor-handle.ts); the threads are started, restarted and closed by
// actor-threads.ts. What is kept of answers on this thread (kept-answers.ts)
// and the consent caches of the other threads are kept true here.
import type { Worker, ResourceLimits } from 'node:worker_threads'
import { join } from 'node:path'
import type { MetamodelDoc } from '../model/metamodel'
import type { ActorConfig, ActorReply, Operation, StreamOp } from '../contract/messages'
import { shardsOfActor } from './tenant-hash'
import { consentChanged } from './read-routing'
import { FORMAT_VERSION } from './manifest'
import type { RemoteShards } from './remote-shards'
import type { ClusterOptions } from '../config/cluster-options'
import type { TraceOptions } from '../config/trace-options'
import { KeptAnswers } from './kept-answers'
import type { ActorHandle } from './actor-handle'
import { ActorThreads } from './actor-threads'
import { ShardRouter } from './shard-router'
import { keeping, keepingStream } from './keeping-replies'
import { countingConsents } from './consent-counts'
import { NO_STREAM, unavailable, wrapping, type ReplyHandler, type StreamHandle } from './reply-handler'
import { TypedEmitter } from './typed-emitter'

export type { ReplyHandler, StreamHandle } from './reply-handler'
export { ShardRefused } from './actor-threads'

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
  /** An actor that exits more than this many times within a minute is stopped, not restarted. */
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
  /** Traces on (Config.traces): the actors export the spans of their commits. */
  traces?: TraceOptions
}

const DEFAULT_WORKER_FILE = join(__dirname, '..', '..', 'workers', 'shard-actor.js')
const DEFAULT_MAX_RESTARTS = 5

/** What the pool tells its listeners. */
type PoolEvents = {
  events: [tenant: string, last: number]
  webhooks: [tenant: string]
  ownership: [shard: number, owned: boolean, epoch: number]
}

export class ActorPool {
  readonly workerFile: string
  readonly resourceLimits: ResourceLimits | undefined
  readonly maxRestarts: number
  private readonly maxPending: number
  private readonly threads: ActorThreads
  private readonly router: ShardRouter
  private readonly emitter = new TypedEmitter<PoolEvents>()
  /** Cluster mode: the shards whose lease a local actor holds, with its epoch. */
  private readonly owned = new Map<number, number>()
  /** Single answers and whole neighbourhoods kept on this thread (single machine only: kept-answers.ts). */
  private readonly keptAnswers: KeptAnswers | undefined

  constructor(private readonly options: PoolOptions) {
    this.workerFile = options.workerFile ?? DEFAULT_WORKER_FILE
    this.resourceLimits = options.actorHeapMb === undefined ? undefined : { maxOldGenerationSizeMb: options.actorHeapMb }
    this.maxPending = options.maxPending ?? 20_000
    this.maxRestarts = options.maxRestarts ?? DEFAULT_MAX_RESTARTS
    // One write counter per shard, shared by the actors (workers/store/write-generations.ts).
    const writeGenerations = new Int32Array(new SharedArrayBuffer(4 * options.shardCount))
    this.keptAnswers = options.cluster === undefined ? new KeptAnswers(writeGenerations) : undefined
    const configs: ActorConfig[] = []
    for (let a = 0; a < options.workerCount; a++) configs.push(actorConfig(options, a, writeGenerations))
    this.threads = new ActorThreads(
      { workerFile: this.workerFile, resourceLimits: this.resourceLimits, maxRestarts: this.maxRestarts, shardCount: options.shardCount, configs },
      {
        eventsAppended: (tenant, last) => this.eventsAppended(tenant, last),
        webhooksChanged: (tenant) => this.emitter.emit('webhooks', tenant),
        ownershipChanged: (shard, owned, epoch) => this.ownershipChanged(shard, owned, epoch),
        // Nothing kept on this thread is served until the exited actor's shards answer again.
        actorExited: () => this.keptAnswers?.forgetAll(),
      },
    )
    this.router = new ShardRouter(this.threads.actors, options.shardCount, options.cluster === undefined)
  }

  /**
   * Resolves once every actor opened and verified its shards; rejects with
   * the first refusal (a damaged shard), which start-up reports and exits on.
   */
  started(): Promise<void> {
    return this.threads.started()
  }

  /** Whether every running actor has opened the other actors' shards for reading (tests wait for it before killing actors). */
  allReadersOpen(): boolean {
    return this.threads.allReadersOpen()
  }

  /** Cluster mode: where the shards this host does not own are answered; undefined on one machine. */
  get remote(): RemoteShards | undefined {
    return this.router.remote
  }

  set remote(remote: RemoteShards | undefined) {
    this.router.remote = remote
  }

  /** The shard that holds the tenant's data. */
  shardOf(tenant: string): number {
    return this.router.shardOf(tenant)
  }

  /** Whether this host's actors serve the tenant now (always on one machine; in a cluster, while they own its shard). */
  servesHere(tenant: string): boolean {
    return this.router.remoteOf(this.router.shardOf(tenant)) === undefined
  }

  /** One request, one reply. A full queue answers 503 at once. In a cluster, the shard's owner answers, wherever it is (RemoteShards). */
  call(tenant: string, operation: Operation, handler: ReplyHandler): void {
    handler = countingConsents(operation, handler)
    const remote = this.router.remote
    if (remote !== undefined) remote.call(this.router.shardOf(tenant), tenant, operation, handler)
    else this.callHere(tenant, operation, handler)
  }

  /** A call answered by this host's actors whoever owns the shard (a forwarded call, checked by its receiver). */
  callHere(tenant: string, operation: Operation, handler: ReplyHandler): void {
    const shard = this.router.shardOf(tenant)
    const owner = this.router.owner(shard)
    const kept = this.keptAnswers
    const keptKey = kept === undefined ? undefined : KeptAnswers.keyOf(operation)
    if (kept !== undefined && keptKey !== undefined) {
      const body = kept.find(shard, keptKey)
      if (typeof body === 'string') {
        handler({ kind: 'ok', id: 0, status: 200, body, total: undefined, kept: undefined })
        return
      }
      if (kept.wantedAgain(keptKey)) handler = keeping(kept, shard, keptKey, handler)
    }
    const actor = this.router.forCall(owner, operation)
    const id = this.threads.newId()
    if (actor.pending.size >= this.maxPending) {
      handler(unavailable(id, 'the shard is overloaded; retry later'))
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
    const answer = handler
    actor.send({ kind: 'call', id, shard, operation }, wrapping(answer, (reply) => this.forgetEverywhere(owner, shard, changed.tenant, changed.ref, () => answer(reply))))
  }

  /**
   * A stream: the handler gets a `chunks` reply per slice (or one error). The
   * actor reads the next slice only after `more()`, which is how back-pressure
   * reaches the scan; `cancel()` stops it.
   */
  openStream(tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle {
    const shard = this.router.shardOf(tenant)
    const remote = this.router.remoteOf(shard)
    if (remote !== undefined) return remote.openStream(shard, tenant, operation, handler)
    return this.openStreamHere(tenant, operation, handler)
  }

  /** A stream read by this host's actors (a forwarded stream, checked by its receiver). */
  openStreamHere(tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle {
    const shard = this.router.shardOf(tenant)
    const owner = this.router.owner(shard)
    const kept = this.keptAnswers
    const keptKey = kept === undefined ? undefined : KeptAnswers.streamKeyOf(operation)
    if (kept !== undefined && keptKey !== undefined) {
      const body = kept.find(shard, keptKey)
      if (body !== undefined) {
        handler({ kind: 'chunks', id: 0, body, done: true, kept: undefined })
        return NO_STREAM
      }
    }
    const gathering = kept !== undefined && keptKey !== undefined && kept.wantedAgain(keptKey) ? keepingStream(kept, shard, keptKey, handler) : undefined
    if (gathering !== undefined) handler = gathering.handler
    const actor = this.router.reader(owner)
    const id = this.threads.newId()
    if (actor.pending.size >= this.maxPending) {
      handler(unavailable(id, 'the shard is overloaded; retry later'))
      return NO_STREAM
    }
    actor.send({ kind: 'call', id, shard, operation }, handler)
    return {
      more: () => { if (actor.pending.has(id)) actor.send({ kind: 'more', id }, undefined) },
      cancel: () => {
        gathering?.stop()
        if (!actor.pending.delete(id)) return
        actor.send({ kind: 'cancel', id }, undefined)
      },
    }
  }

  /** One call to every shard (an operation over all tenants of a shard); the handler gets each shard's reply. */
  callEveryShard(operation: Operation, handler: (shard: number, reply: ActorReply) => void): void {
    for (let shard = 0; shard < this.options.shardCount; shard++) {
      this.router.owner(shard).send({ kind: 'call', id: this.threads.newId(), shard, operation }, (reply) => handler(shard, reply))
    }
  }

  /** Called whenever a tenant's event log grows (long-polls, streams and webhooks wait on it). */
  onEvents(listener: (tenant: string, last: number) => void): () => void {
    return this.emitter.on('events', listener)
  }

  /** @internal from an actor's unsolicited `events` message, or cluster mode's news of another host's events */
  eventsAppended(tenant: string, last: number): void {
    this.emitter.emit('events', tenant, last)
  }

  /** Called after a tenant's webhooks were created or deleted (webhook delivery reloads them). */
  onWebhooksChanged(listener: (tenant: string) => void): () => void {
    return this.emitter.on('webhooks', listener)
  }

  /** Whether this host's actors serve the shard: always in the single-machine mode, under a valid lease in cluster mode. */
  ownedLocally(shard: number): boolean {
    return this.options.cluster === undefined || this.owned.has(shard)
  }

  /** Called whenever a local actor gains or loses a shard's lease (cluster mode). */
  onOwnership(listener: (shard: number, owned: boolean, epoch: number) => void): () => void {
    return this.emitter.on('ownership', listener)
  }

  /** The actors not serving now (stopped, or restarting), each with why; empty when all are up. */
  actorsDown(): string[] {
    return this.threads.actorsDown()
  }

  /** Calls waiting for their reply, per actor (the queue depth). */
  queueDepths(): number[] {
    return this.threads.actors.map((a) => a.pending.size)
  }

  /** The worker threads (tests kill them to prove restarts). */
  workers(): Worker[] {
    return this.threads.actors.map((a) => a.worker)
  }

  restartCount(): number {
    return this.threads.restartCount()
  }

  /** Waits for pending commits, closes every environment and stops the threads. */
  close(): Promise<void> {
    return this.threads.close()
  }

  /** A local actor gained or lost a shard's lease; an actor's exit loses all of its shards'. */
  private ownershipChanged(shard: number, owned: boolean, epoch: number): void {
    if (owned) this.owned.set(shard, epoch)
    else if (!this.owned.delete(shard)) return
    this.emitter.emit('ownership', shard, owned, epoch)
  }

  /**
   * Runs `done` once every actor but the owner has dropped what it cached of
   * the consent (an actor that exits or is stopped holds nothing any more:
   * its 503 counts as done).
   */
  private forgetEverywhere(owner: ActorHandle, shard: number, tenant: string, ref: string, done: () => void): void {
    // What this thread kept of the shard goes last: a reader may have answered from its cached consent until it dropped it.
    const forgotten = (): void => {
      this.keptAnswers?.forgetShard(shard)
      done()
    }
    const others = this.threads.actors.filter((a) => a !== owner)
    let left = others.length
    if (left === 0) {
      forgotten()
      return
    }
    for (const actor of others) {
      actor.send({ kind: 'forgetConsent', id: this.threads.newId(), shard, tenant, ref }, () => {
        if (--left === 0) forgotten()
      })
    }
  }
}

/** One actor's start data: its shards, and what every actor is told alike. */
function actorConfig(options: PoolOptions, index: number, writeGenerations: Int32Array): ActorConfig {
  return {
    dataDir: options.dataDir,
    shards: shardsOfActor(index, options.workerCount, options.shardCount),
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
    traces: options.traces,
  }
}
