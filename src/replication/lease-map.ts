// Who owns each shard, as this host last saw the lease bucket: a lease is
// believed for one lease period after it was last written (its owner renews
// it well within that), measured on this host's monotonic clock, so a dead
// owner's lease stops being believed on its own and requests get a 503 rather
// than wait on a host that cannot answer.
import type { LeaseValue } from '../contract/cluster-names'

interface Seen {
  value: LeaseValue
  /** performance.now() when the lease was written, as far as this host can tell. */
  at: number
}

export class LeaseMap {
  private readonly leases = new Map<number, Seen>()
  /** The bucket revision of each shard's lease as last seen (a put or a delete). */
  private readonly revisions = new Map<number, number>()

  constructor(readonly leaseMs: number, private readonly now: () => number = () => performance.now()) {}

  /** A lease written `ageMs` ago (0 for a live update), or deleted (undefined), at bucket revision `revision`. */
  seen(shard: number, value: LeaseValue | undefined, ageMs = 0, revision?: number): void {
    if (revision !== undefined) {
      // The watch and the poll both report: an older revision than one already seen changes nothing.
      if (revision < (this.revisions.get(shard) ?? 0)) return
      this.revisions.set(shard, revision)
    }
    // A lease being handed over names nobody to send requests to: they wait for the claim of the host it names.
    if (value === undefined || value.handTo !== undefined) {
      this.leases.delete(shard)
      return
    }
    // A renewal keeps the same value object, so that owner() stays identical while the lease is the same one.
    const before = this.leases.get(shard)?.value
    const same = before !== undefined && before.node === value.node && before.epoch === value.epoch && before.url === value.url
    this.leases.set(shard, { value: same ? before : value, at: this.now() - Math.max(0, ageMs) })
  }

  /** The bucket revision of the shard's lease last seen (0: none yet). */
  revision(shard: number): number {
    return this.revisions.get(shard) ?? 0
  }

  /** The shard's owner while its lease is valid; undefined when nobody holds one. */
  owner(shard: number): LeaseValue | undefined {
    const seen = this.leases.get(shard)
    if (seen === undefined || this.now() - seen.at >= this.leaseMs) return undefined
    return seen.value
  }

  /** Retry-After of a 503 for want of an owner: one lease period, in whole seconds rounded up. */
  retryAfterSeconds(): number {
    return Math.ceil(this.leaseMs / 1000)
  }
}

/** The shard of a lease key (`shard.<n>`), or undefined for other keys (the auth lease). */
export function shardOfLeaseKey(key: string): number | undefined {
  const m = /^shard\.(\d+)$/.exec(key)
  return m === null ? undefined : Number(m[1])
}

/** A lease's JSON, or undefined when it is not one (the map then treats the shard as ownerless). */
export function parseLease(text: string): LeaseValue | undefined {
  try {
    const v = JSON.parse(text) as Partial<LeaseValue>
    if (typeof v.node === 'string' && typeof v.url === 'string' && typeof v.epoch === 'number') {
      return typeof v.handTo === 'string' ? { node: v.node, url: v.url, epoch: v.epoch, handTo: v.handTo } : { node: v.node, url: v.url, epoch: v.epoch }
    }
  } catch {
    // not JSON: no lease
  }
  return undefined
}
