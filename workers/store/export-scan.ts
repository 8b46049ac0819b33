// A tenant export as a resumable scan (like scans.ts): the metamodel line,
// then the consents, nodes and relations of the tenant, each step a bounded
// slice that remembers the last key, so memory stays bounded whatever the
// tenant's size. Data is opened as a read would open it: what a read cannot
// open (revoked, sealed under a destroyed key) is written `locked`, never
// decrypted; properties whose consent is revoked are left out.
import type { ExportLine, ExportedData, ExportedMeta } from '../../src/contract/tenant-export'
import type { Database } from 'lmdb'
import { consentOf, prefixRange, tenantPrefix, type Key } from './keys'
import type { ShardContext } from './context'
import { SLICE_BYTES, SLICE_ITEMS, type Scan, type Slice } from './scans'
import { openElement } from './sealing'
import type { ConsentRecord, StoredElement } from './schema'
import type { ShardStore } from './shard-store'

type Phase = 'consents' | 'nodes' | 'relations'
const PHASES: readonly Phase[] = ['consents', 'nodes', 'relations']

const ref = (ns: unknown, type: unknown, id: unknown): { ns: string; type: string; id: string } => ({ ns: ns as string, type: type as string, id: id as string })

/** An element's meta and its properties as a read opens them, or `locked` (also the subject export's: subject-export.ts). */
export function element(store: ShardStore, tenant: string, key: Key, stored: StoredElement): ExportedMeta & ExportedData {
  const opened = openElement(store, tenant, key, stored, true, false)
  const meta = { created: stored.c, createdBy: stored.b, owner: stored.o }
  return opened.kind === 'open' ? { ...meta, properties: JSON.parse(opened.record.p) as Record<string, unknown> } : { ...meta, locked: true }
}

function lineOf(store: ShardStore, tenant: string, phase: Phase, key: Key, value: unknown): ExportLine {
  if (phase === 'consents') {
    const c = value as ConsentRecord
    return {
      kind: 'consent', ref: consentOf(key).ref, subject: c.subject, status: c.status, revokedProperties: c.revokedProperties, created: c.created,
      ...(c.client === undefined ? {} : { client: c.client }), ...(c.changed === undefined ? {} : { changed: c.changed }),
    }
  }
  const stored = value as StoredElement
  if (phase === 'nodes') return { kind: 'node', node: ref(key[1], key[2], key[3]), ...element(store, tenant, key, stored) }
  return { kind: 'relation', from: ref(key[1], key[2], key[3]), to: ref(key[4], key[5], key[6]), rel: ref(key[7], key[8], key[9]), ...element(store, tenant, key, stored) }
}

export class ExportScan implements Scan {
  private phase = -1
  private lastKey: Key | undefined

  constructor(private readonly tenant: string) {}

  step({ store, metamodel }: ShardContext): Slice {
    const { tenant } = this
    const chunks: string[] = []
    let bytes = 0
    if (this.phase < 0) {
      chunks.push(JSON.stringify({ kind: 'metamodel', tenant, metamodel: metamodel.forTenant(tenant) } satisfies ExportLine))
      this.phase = 0
    }
    const prefix = tenantPrefix(tenant)
    for (; this.phase < PHASES.length; this.phase++, this.lastKey = undefined) {
      const phase = PHASES[this.phase]!
      const db = store[phase] as Database<unknown, Key>
      const opts = { start: this.lastKey ?? prefix, end: prefixRange(prefix).end, exclusiveStart: this.lastKey !== undefined }
      for (const { key, value } of db.getRange(opts)) {
        if (chunks.length >= SLICE_ITEMS || bytes >= SLICE_BYTES) return { chunks, done: false }
        this.lastKey = key
        const line = JSON.stringify(lineOf(store, tenant, phase, key, value))
        chunks.push(line)
        bytes += line.length
      }
    }
    return { chunks, done: true }
  }
}
