// Tenant -> shard -> actor. The shard of a tenant never changes for a data
// directory (its shard count is in the manifest); the actor that owns a shard
// may change between restarts when the worker count does.

/** FNV-1a, 32 bits, over the UTF-16 code units: stable across versions and fast. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

export function shardOf(tenant: string, shardCount: number): number {
  return fnv1a(tenant) % shardCount
}

export function actorOf(shard: number, workerCount: number): number {
  return shard % workerCount
}

/** The shards one actor owns. */
export function shardsOfActor(actor: number, workerCount: number, shardCount: number): number[] {
  const out: number[] = []
  for (let s = 0; s < shardCount; s++) if (actorOf(s, workerCount) === actor) out.push(s)
  return out
}
