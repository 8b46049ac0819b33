// The two reads that may return a whole type or neighbourhood: the list GET
// and neighbours. Each is a resumable scan: one step reads a bounded slice
// and remembers the last key, so a stream holds no long read transaction and
// never more than one slice in memory; the next step starts after that key.
import type { Criterion, NodeRef } from '../../src/shard/messages'
import { END, IN, adjacencyPrefix, indexPrefix, nodeKey, relationKey, relationOfAdjacency, typePrefix, type Key } from './keys'
import { nodeChunk, nodeObject, relationChunk } from './records'
import type { ShardContext } from './nodes'
import { indexTerm } from './search-index'

export interface Slice {
  chunks: string[]
  done: boolean
}

/** How much one step may read: whichever limit is reached first. */
export const SLICE_ITEMS = 256
export const SLICE_BYTES = 64 * 1024

export interface Scan {
  step(sc: ShardContext): Slice
}

const TENANT_OWNER = 'TENANT'

export class ListScan implements Scan {
  private lastKey: Key | undefined
  private remaining: number

  constructor(
    private readonly tenant: string,
    private readonly ns: string,
    private readonly type: string,
    limit: number | undefined,
    private readonly owner: string | undefined,
    private readonly criterion: Criterion | undefined,
  ) {
    this.remaining = limit ?? Number.POSITIVE_INFINITY
  }

  step({ store, urls }: ShardContext): Slice {
    const chunks: string[] = []
    let bytes = 0
    const prefix = this.criterion === undefined
      ? typePrefix(this.tenant, this.ns, this.type)
      : indexPrefix(this.tenant, this.ns, this.type, this.criterion.property, indexTerm(this.criterion.property, this.criterion.value))
    const range = this.criterion === undefined ? store.nodes.getKeys.bind(store.nodes) : store.index.getKeys.bind(store.index)
    const opts = { start: this.lastKey ?? prefix, end: [...prefix, END], exclusiveStart: this.lastKey !== undefined }
    for (const raw of range(opts)) {
      if (this.remaining <= 0) return { chunks, done: true }
      if (chunks.length >= SLICE_ITEMS || bytes >= SLICE_BYTES) return { chunks, done: false }
      const key = raw as Key
      this.lastKey = key
      const id = key[key.length - 1] as string
      const node: NodeRef = { ns: this.ns, type: this.type, id }
      const record = store.nodes.get(nodeKey(this.tenant, node))
      if (record === undefined) continue
      if (this.owner !== undefined && record.o !== this.owner && record.o !== TENANT_OWNER) continue
      const json = nodeObject(urls, this.tenant, node, record)
      chunks.push(json)
      bytes += json.length
      this.remaining--
    }
    return { chunks, done: true }
  }
}

/** Source node first, then each neighbour once with every relation joining it to the source. */
export class NeighboursScan implements Scan {
  private lastKey: Key | undefined
  private sentSource = false

  constructor(private readonly tenant: string, private readonly source: NodeRef) {}

  /** False when the source node does not exist (the 404 of the spec). */
  sourceExists({ store }: ShardContext): boolean {
    return store.nodes.get(nodeKey(this.tenant, this.source)) !== undefined
  }

  step({ store, urls }: ShardContext): Slice {
    const { tenant, source } = this
    const chunks: string[] = []
    let bytes = 0
    if (!this.sentSource) {
      const record = store.nodes.get(nodeKey(tenant, source))
      if (record === undefined) return { chunks, done: true }
      chunks.push(nodeChunk(urls, tenant, source, record, undefined))
      this.sentSource = true
    }
    const prefix = adjacencyPrefix(tenant, source)
    let group: { neighbour: NodeRef; relations: string[]; lastKey: Key } | undefined
    const flush = (): void => {
      if (group === undefined) return
      const record = store.nodes.get(nodeKey(tenant, group.neighbour))
      if (record !== undefined) {
        const json = nodeChunk(urls, tenant, group.neighbour, record, group.relations)
        chunks.push(json)
        bytes += json.length
      }
      this.lastKey = group.lastKey
      group = undefined
    }
    const opts = { start: this.lastKey ?? prefix, end: [...prefix, END], exclusiveStart: this.lastKey !== undefined }
    for (const raw of store.adjacency.getKeys(opts)) {
      const key = raw as Key
      const { neighbour, relation, direction } = relationOfAdjacency(key)
      const sameNeighbour = group !== undefined && group.neighbour.ns === neighbour.ns && group.neighbour.type === neighbour.type && group.neighbour.id === neighbour.id
      if (!sameNeighbour) {
        flush()
        // Stop only between neighbours, so one neighbour's relations are never split.
        if (chunks.length >= SLICE_ITEMS || bytes >= SLICE_BYTES) return { chunks, done: false }
        group = { neighbour, relations: [], lastKey: key }
      }
      const g = group as NonNullable<typeof group>
      g.lastKey = key
      // A relation from the source to itself is listed under both directions; show it once.
      const selfLoop = neighbour.ns === source.ns && neighbour.type === source.type && neighbour.id === source.id
      if (selfLoop && direction === IN) continue
      const record = store.relations.get(relationKey(tenant, relation))
      if (record !== undefined) g.relations.push(relationChunk(urls, tenant, relation, record))
    }
    flush()
    return { chunks, done: true }
  }
}
