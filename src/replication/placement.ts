// Which live host a shard prefers (rendezvous hashing: the highest hash of
// shard and node id). Every host computes the same answer from the same live
// set, a host joining or leaving moves only the shards it wins or held, and
// shards spread evenly on average (not exactly: with few shards one host may
// prefer more than its share). A preference only: leases decide ownership.
import { fnv1a } from '../shards/tenant-hash'

/** fnv1a's bits mixed (murmur3's finaliser): fnv1a alone differs too little between similar ids. */
function score(shard: number, node: string): number {
  let h = fnv1a(`${shard}/${node}`)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b) >>> 0
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35) >>> 0
  h ^= h >>> 16
  return h >>> 0
}

/** The preferred host of `shard` among `nodes` (ties: the smaller id). */
export function preferredHost(shard: number, nodes: readonly string[]): string | undefined {
  let best: string | undefined
  let bestScore = -1
  for (const node of nodes) {
    const s = score(shard, node)
    if (s > bestScore || (s === bestScore && best !== undefined && node < best)) {
      best = node
      bestScore = s
    }
  }
  return best
}
