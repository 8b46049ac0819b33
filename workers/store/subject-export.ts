// One data subject's export (docs/manual/graph-api.md, "A data subject's own
// consents and data"): the head the front thread wrote (the subject's
// account), each of the subject's consents, then the nodes and relations
// each granted consent owns, through the owner indexes (keys.ts: ownedKey,
// ownedRelationKey). A resumable scan like export-scan.ts: each step reads a
// bounded slice in its own read and remembers where it stopped, so memory
// stays flat whatever the subject holds.
import type { ExportLine } from '../../src/contract/tenant-export'
import { consentEntry, getConsentRecord, subjectRefs } from './consents'
import type { ShardContext } from './context'
import type { ShardStore } from './shard-store'
import { element } from './export-scan'
import { nodeKey, ownedNodeOf, ownedPrefix, ownedRelationOf, prefixRange, relationKey, type Key } from './keys'
import { SLICE_BYTES, SLICE_ITEMS, SLICE_KEYS, type Scan, type Slice } from './scans'

type Phase = 'head' | 'consents' | 'nodes' | 'relations' | 'done'

export class SubjectExportScan implements Scan {
  private phase: Phase = 'head'
  /** the last consent reference listed (phase consents) */
  private lastRef: string | undefined
  /** the granted consents whose data is exported, and which one is being read */
  private readonly granted: string[] = []
  private owner = 0
  /** the last owner-index key read of the current consent */
  private lastKey: Key | undefined

  constructor(private readonly tenant: string, private readonly subject: string, private readonly head: string) {}

  step({ store }: ShardContext): Slice {
    const { tenant } = this
    const chunks: string[] = []
    let bytes = 0
    let read = 0
    const full = (): boolean => chunks.length >= SLICE_ITEMS || bytes >= SLICE_BYTES || read >= SLICE_KEYS
    const push = (line: string): void => {
      chunks.push(line)
      bytes += line.length
    }
    if (this.phase === 'head') {
      push(this.head)
      this.phase = 'consents'
    }
    while (this.phase === 'consents') {
      const refs = subjectRefs(store, tenant, this.subject, this.lastRef, SLICE_ITEMS)
      if (refs.length === 0) this.next('nodes')
      for (const ref of refs) {
        this.lastRef = ref
        const c = getConsentRecord(store, tenant, ref)
        if (c === undefined) continue
        if (c.status === 'granted') this.granted.push(ref)
        // A revoked consent's key is destroyed: its data is gone, and the export says so.
        push(JSON.stringify({ kind: 'consent', ...consentEntry(ref, c), ...(c.status === 'revoked' ? { erased: true } : {}) }))
      }
      if (full()) return { chunks, done: false }
    }
    while (this.phase === 'nodes' || this.phase === 'relations') {
      const ref = this.granted[this.owner]
      if (ref === undefined) {
        this.next(this.phase === 'nodes' ? 'relations' : 'done')
        continue
      }
      const prefix = ownedPrefix(tenant, ref)
      const db = this.phase === 'nodes' ? store.owned : store.ownedRelations
      const opts = { start: this.lastKey ?? prefix, end: prefixRange(prefix).end, exclusiveStart: this.lastKey !== undefined }
      let ended = true
      for (const raw of db.getKeys(opts)) {
        if (full()) {
          ended = false
          break
        }
        read++
        const key = raw as Key
        this.lastKey = key
        const line = this.phase === 'nodes' ? this.nodeLine(store, key) : this.relationLine(store, key)
        if (line !== undefined) push(line)
      }
      if (!ended) return { chunks, done: false }
      this.owner++
      this.lastKey = undefined
    }
    return { chunks, done: true }
  }

  private next(phase: Phase): void {
    this.phase = phase
    this.owner = 0
    this.lastKey = undefined
  }

  private nodeLine(store: ShardStore, key: Key): string | undefined {
    const node = ownedNodeOf(key)
    const nk = nodeKey(this.tenant, node)
    const stored = store.nodes.get(nk)
    // The index names the current owner; anything else is a stale entry.
    if (stored === undefined || stored.o !== this.granted[this.owner]) return undefined
    return JSON.stringify({ kind: 'node', node, ...element(store, this.tenant, nk, stored) } satisfies ExportLine)
  }

  private relationLine(store: ShardStore, key: Key): string | undefined {
    const relation = ownedRelationOf(key)
    const rk = relationKey(this.tenant, relation)
    const stored = store.relations.get(rk)
    if (stored === undefined || stored.o !== this.granted[this.owner]) return undefined
    return JSON.stringify({ kind: 'relation', ...relation, ...element(store, this.tenant, rk, stored) } satisfies ExportLine)
  }
}
