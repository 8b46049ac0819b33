// One shard's LMDB environment and its databases. An actor opens the shards
// it owns; nothing else touches them while it runs.
import { open, RootDatabase, Database } from 'lmdb'
import { join } from 'node:path'
import type { Key } from './keys'
import type { ElementRecord } from './records'

export interface ShardStore {
  readonly shard: number
  readonly env: RootDatabase
  /** [tenant, ns, type, id] -> node */
  readonly nodes: Database<ElementRecord, Key>
  /** [tenant, from..., to..., rel...] -> relation */
  readonly relations: Database<ElementRecord, Key>
  /** [tenant, owner..., neighbour..., direction, rel...] -> 1 */
  readonly adjacency: Database<number, Key>
  /** [tenant, ns, type] -> number of nodes */
  readonly counts: Database<number, Key>
  /** [tenant, ns, type, property, term, id] -> 1 */
  readonly index: Database<number, Key>
}

export function shardPath(dataDir: string, shard: number): string {
  return join(dataDir, 'shards', String(shard))
}

export function openShard(dataDir: string, shard: number): ShardStore {
  const env = open({
    path: shardPath(dataDir, shard),
    maxDbs: 8,
    // Commits overlap with the previous sync; writes are acknowledged only once
    // `env.flushed` resolves (DESIGN.md: durable before 204).
    overlappingSync: true,
  })
  const sub = <V>(name: string) => env.openDB<V, Key>(name, { encoding: 'msgpack' })
  return {
    shard,
    env,
    nodes: sub<ElementRecord>('nodes'),
    relations: sub<ElementRecord>('relations'),
    adjacency: sub<number>('adjacency'),
    counts: sub<number>('counts'),
    index: sub<number>('index'),
  }
}

export async function closeShard(store: ShardStore): Promise<void> {
  await store.env.flushed
  await store.env.close()
}
