// The shard actors' worker threads: starting them, telling when all have
// opened their shards, restarting one that dies (within a budget: one that
// keeps dying is stopped and its shards answer 503), and closing them.
import { Worker, type ResourceLimits } from 'node:worker_threads'
import { decodeReplies } from '../contract/codec'
import type { ActorConfig, ActorReply } from '../contract/messages'
import { log } from '../telemetry/log'
import { actorExits, type ActorExitReason } from '../telemetry/metrics'
import { ActorHandle } from './actor-handle'
import { logActorRecord, recordShardStats } from './shard-stats'
import { actorOf } from './tenant-hash'

/** A shard that could not be opened (damaged files, a missing key); the message says what to do. */
export class ShardRefused extends Error {}

/** What the threads tell the pool besides the replies to its calls. */
export interface ThreadNews {
  /** A tenant's event log grew. */
  eventsAppended(tenant: string, last: number): void
  /** A tenant's webhooks were created or deleted. */
  webhooksChanged(tenant: string): void
  /** An actor gained or lost a shard's lease (cluster mode); an exited actor loses all of its shards'. */
  ownershipChanged(shard: number, owned: boolean, epoch: number): void
  /** An actor's thread exited. */
  actorExited(): void
}

export interface ThreadOptions {
  workerFile: string
  resourceLimits: ResourceLimits | undefined
  /** An actor that exits more than this many times within RESTART_WINDOW_MS is stopped, not restarted. */
  maxRestarts: number
  shardCount: number
  /** Each actor's start data, by actor index. */
  configs: ActorConfig[]
}

const RESTART_WINDOW_MS = 60_000
/** How long ending a thread waits for its readers' open to finish. */
const READERS_OPEN_WAIT_MS = 30_000
/** How long closing waits for an actor's pending commits before it ends the thread anyway. */
const SHUTDOWN_WAIT_MS = 10_000

/** One actor's exits: a budget, not a loop. */
interface Exits {
  recent: number[]
  restarts: number
  /** Closing: an exit now is the end, not a crash. */
  stopping: boolean
  /** The actor answered its shutdown: it ran nothing after, so the calls still pending never ran. */
  closed: boolean
}

export class ActorThreads {
  readonly actors: ActorHandle[] = []
  private readonly exits: Exits[] = []
  private nextId = 1
  private readonly startedActors = new Set<number>()
  private startWaiters: { resolve: () => void; reject: (err: Error) => void }[] = []
  private refusal: string | undefined
  private readonly readersAsked = new WeakSet<Worker>()

  constructor(private readonly options: ThreadOptions, private readonly news: ThreadNews) {
    options.configs.forEach((_, index) => {
      const actor = new ActorHandle(index)
      this.actors.push(actor)
      this.exits.push({ recent: [], restarts: 0, stopping: false, closed: false })
      this.spawn(actor)
    })
  }

  /** A request id no call in flight has. */
  newId(): number {
    return this.nextId++
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

  /** Whether every running actor has opened the other actors' shards for reading. */
  allReadersOpen(): boolean {
    return this.actors.every((a) => a.readersOpen || a.stopped !== undefined)
  }

  /** The actors not serving now (stopped, or restarting), each with why; empty when all are up. */
  actorsDown(): string[] {
    return this.actors.filter((a) => !a.up || a.stopped !== undefined).map((a) => `actor ${a.index}: ${a.stopped ?? 'starting or restarting'}`)
  }

  restartCount(): number {
    return this.exits.reduce((n, e) => n + e.restarts, 0)
  }

  /** Waits for pending commits, closes every environment and stops the threads. */
  async close(): Promise<void> {
    await Promise.all(this.actors.map((actor) => new Promise<void>((resolve) => {
      this.exits[actor.index]!.stopping = true
      const timer = setTimeout(() => void this.terminate(actor).then(() => resolve()), SHUTDOWN_WAIT_MS)
      actor.send({ kind: 'shutdown', id: this.newId() }, () => {
        this.exits[actor.index]!.closed = true
        clearTimeout(timer)
        void this.terminate(actor).then(() => resolve())
      })
    })))
  }

  private spawn(actor: ActorHandle): void {
    const worker = new Worker(this.options.workerFile, { workerData: this.options.configs[actor.index], resourceLimits: this.options.resourceLimits })
    actor.attach(worker)
    // What ended the thread, told by its error event before its exit.
    let reason: ActorExitReason = 'exited'
    worker.on('message', (wire: unknown) => {
      for (const reply of decodeReplies(wire)) this.received(actor, reply)
    })
    // A reply that cannot be deserialized: its request stays pending until the actor restarts or shuts down.
    worker.on('messageerror', (err) => log.error({ err, actor: actor.index }, `shard actor ${actor.index}: a reply could not be read`))
    worker.on('error', (err) => {
      const outOfHeap = (err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY'
      reason = outOfHeap ? 'out_of_heap' : 'crashed'
      log.error({ err, actor: actor.index }, outOfHeap ? `shard actor ${actor.index} ran out of its heap (--actor-heap-mb ${this.options.resourceLimits?.maxOldGenerationSizeMb ?? 'unset'})` : `shard actor ${actor.index} crashed`)
    })
    worker.on('exit', (code) => {
      if (actor.worker === worker) this.exited(actor, code, reason)
    })
  }

  private received(actor: ActorHandle, reply: ActorReply): void {
    switch (reply.kind) {
      case 'events': this.news.eventsAppended(reply.tenant, reply.last); return
      case 'webhooks': this.news.webhooksChanged(reply.tenant); return
      case 'stats': recordShardStats(reply.shards); return
      case 'ownership': this.news.ownershipChanged(reply.shard, reply.owned, reply.epoch); return
      case 'log': logActorRecord(actor.index, reply, (call) => actor.pending.get(call)?.requestId?.()); return
      case 'started':
        actor.up = true
        this.actorStarted(actor.index)
        return
      case 'refused': this.stop(actor, reply.message); return
      default: actor.deliver(reply)
    }
  }

  private exited(actor: ActorHandle, code: number, reason: ActorExitReason): void {
    actor.up = false
    // A shard whose actor is down answers as it (a 503 now, or after a restart what the restarted writer reads), not from memory.
    this.news.actorExited()
    // After a clean shutdown (in a cluster every shard was handed over first), a call still pending never ran: a
    // host that forwarded it sends it on to the shard's next owner rather than answer 503.
    const closed = this.exits[actor.index]!.closed
    actor.failAll(closed ? 'this host is shutting down; retry the request' : actor.stopped === undefined ? 'the shard actor restarted; retry the request' : actor.unavailable(), closed)
    // A dead actor serves nothing: its leases lapse (cluster mode).
    for (const shard of this.options.configs[actor.index]!.shards) this.news.ownershipChanged(shard, false, 0)
    const exits = this.exits[actor.index]!
    if (exits.stopping || actor.stopped !== undefined) return
    // An actor that keeps dying (a damaged file, a full disk at open) is
    // stopped with its reason instead of restarted forever.
    const t = Date.now()
    exits.recent = [...exits.recent.filter((at) => t - at < RESTART_WINDOW_MS), t]
    if (exits.recent.length > this.options.maxRestarts) {
      actorExits.labels(reason, 'stopped').inc()
      this.stop(actor, `it exited ${exits.recent.length} times within ${RESTART_WINDOW_MS / 1000} s (last exit code ${code})`)
      return
    }
    exits.restarts++
    actorExits.labels(reason, 'restarted').inc()
    log.warn({ actor: actor.index }, `shard actor ${actor.index} exited with code ${code}; restarting`)
    this.spawn(actor)
  }

  /** Stops the actor for good: its shards answer 503 with the reason, which is logged once. */
  private stop(actor: ActorHandle, reason: string): void {
    if (actor.stopped !== undefined) return
    actor.stopped = reason
    log.error({ actor: actor.index }, `shard actor ${actor.index} stopped, its shards answer 503: ${reason}`)
    this.refusal ??= reason
    for (const w of this.startWaiters.splice(0)) w.reject(new ShardRefused(reason))
    void this.terminate(actor)
  }

  /** Ends the thread, but never inside the readers' open (bounded: a hung open is terminated after READERS_OPEN_WAIT_MS). */
  private async terminate(actor: ActorHandle): Promise<void> {
    const worker = actor.worker
    const opening = actor.openingReaders
    if (opening !== undefined) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([opening, new Promise<void>((resolve) => { timer = setTimeout(resolve, READERS_OPEN_WAIT_MS) })])
      clearTimeout(timer)
    }
    await worker.terminate()
  }

  private actorStarted(index: number): void {
    this.startedActors.add(index)
    if (this.startedActors.size < this.actors.length) return
    for (const w of this.startWaiters.splice(0)) w.resolve()
    // Every owner has opened and migrated its shards: now the others may open them for reading
    // (and an actor that restarts later, once it has started again).
    for (const actor of this.actors) if (!actor.readersOpen && actor.stopped === undefined) this.openReaders(actor)
  }

  /** Asks one actor incarnation to open every shard it does not own; it takes reads once it has. */
  private openReaders(actor: ActorHandle): void {
    const worker = actor.worker
    if (this.readersAsked.has(worker)) return
    this.readersAsked.add(worker)
    const shards: number[] = []
    for (let s = 0; s < this.options.shardCount; s++) if (actorOf(s, this.actors.length) !== actor.index) shards.push(s)
    let opened!: () => void
    actor.openingReaders = new Promise<void>((resolve) => { opened = resolve })
    worker.once('exit', () => opened())
    actor.send({ kind: 'openReaders', id: this.newId(), shards }, (reply) => {
      opened()
      if (actor.worker === worker) actor.openingReaders = undefined
      if (reply.kind === 'ok' && actor.worker === worker) actor.readersOpen = true
      else if (reply.kind === 'error') log.error({ actor: actor.index }, `shard actor ${actor.index}: opening the other shards for reading failed: ${reply.message}`)
    })
  }
}
