// The auth lease (AUTH_LEASE_KEY in the lease bucket): which host serves the
// authorization service. Taken with create or compare-and-set on the key's
// revision and renewed the same way every third of a lease period; the holder
// serves only while its last renewal, timed from before it was sent, is less
// than a lease period old by its own monotonic clock. Every other host reads
// the key on the same beat and believes an owner only while its revision has
// changed within a lease period.
//
// Until the auth store is replicated (docs/cluster.md), the lease is pinned:
// a host takes it only when nobody holds it or it names this host; a dead
// holder's lease is never taken over, because a successor's store would not
// have its tokens, users and revocations. Moving it is an operator's act
// (delete the key), documented with its consequences.
import type { KV } from '@nats-io/kv'
import { AUTH_LEASE_KEY, type LeaseValue } from '../contract/cluster-names'
import { log } from '../log'
import { parseLease } from '../replication/lease-map'

export interface AuthLeaseOptions {
  kv: KV
  nodeId: string
  url: string
  leaseMs: number
  now?: () => number
}

export class AuthLease {
  private revision = 0
  private held: LeaseValue | undefined
  private validUntil = 0
  private seen: { value: LeaseValue | undefined; revision: number; at: number } = { value: undefined, revision: -1, at: 0 }
  private timer: NodeJS.Timeout | undefined
  private warned = ''
  private readonly now: () => number

  constructor(private readonly o: AuthLeaseOptions) {
    this.now = o.now ?? (() => performance.now())
  }

  servesHere(): boolean {
    return this.held !== undefined && this.now() < this.validUntil
  }

  /** The owner while its lease is believed (this host's own while it serves). */
  owner(): LeaseValue | undefined {
    if (this.servesHere()) return this.held
    if (this.held !== undefined) return undefined
    const { value, at } = this.seen
    return value !== undefined && this.now() - at < this.o.leaseMs ? value : undefined
  }

  /** Takes or renews the lease, or reads who holds it: once now, then every third of a lease period. */
  async start(): Promise<void> {
    await this.beat()
    this.timer = setInterval(() => void this.beat(), Math.max(100, Math.floor(this.o.leaseMs / 3)))
    this.timer.unref()
  }

  private async beat(): Promise<void> {
    const started = this.now()
    try {
      if (this.held !== undefined) await this.renew(started)
      else await this.claimOrWatch(started)
    } catch (err) {
      // A failed renewal is not a lost lease yet: servesHere() runs out on its own at validUntil.
      log.warn({ err }, 'cluster: the auth lease could not be read or renewed')
    }
  }

  private async renew(started: number): Promise<void> {
    const held = this.held!
    try {
      this.revision = await this.o.kv.update(AUTH_LEASE_KEY, JSON.stringify(held), this.revision)
      this.validUntil = started + this.o.leaseMs
    } catch (err) {
      // Someone wrote the key since our last renewal (an operator moved the lease): it is no longer ours.
      if (this.now() >= this.validUntil || /wrong last sequence/i.test(String(err))) {
        log.warn(`cluster: ${this.o.nodeId} lost the auth lease`)
        this.held = undefined
        this.validUntil = 0
      }
      throw err
    }
  }

  private async claimOrWatch(started: number): Promise<void> {
    const entry = await this.o.kv.get(AUTH_LEASE_KEY)
    const value = entry === null || entry.operation !== 'PUT' ? undefined : parseLease(entry.string())
    if (entry !== null && entry.revision !== this.seen.revision) this.seen = { value, revision: entry.revision, at: started }
    if (value !== undefined && value.node !== this.o.nodeId) {
      if (this.now() - this.seen.at >= this.o.leaseMs && this.warned !== value.node) {
        this.warned = value.node
        log.error(`cluster: the auth lease of ${value.node} expired; it is not taken over (the auth store is not replicated): docs/cluster.md says how to move it`)
      }
      return
    }
    const mine: LeaseValue = { node: this.o.nodeId, url: this.o.url, epoch: (value?.epoch ?? 0) + 1 }
    this.revision = entry === null ? await this.o.kv.create(AUTH_LEASE_KEY, JSON.stringify(mine)) : await this.o.kv.update(AUTH_LEASE_KEY, JSON.stringify(mine), entry.revision)
    this.held = mine
    this.validUntil = started + this.o.leaseMs
    log.info(`cluster: ${this.o.nodeId} serves the authorization service (auth lease epoch ${mine.epoch})`)
  }

  /** Stops renewing; the lease stays for this host to take back on restart (it is pinned to it). */
  stop(): void {
    clearInterval(this.timer)
    this.held = undefined
    this.validUntil = 0
  }
}
