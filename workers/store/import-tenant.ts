// One batch of a tenant import (src/contract/tenant-export.ts): consents keep
// their references and get new keys of this installation (a revoked one's
// key is destroyed once the batch commits, as a revocation's is); elements
// are sealed again under their owner's key here and indexed for search, or
// stored locked when they were exported locked or their consent is revoked.
// What exists already is kept as it is, so an interrupted import can be run
// again. The batch is checked whole before anything is written: a line that
// names an unknown consent or end node refuses the batch with nothing changed.
// No change events are written: the data is moved, not created.
import type { NodeRef } from '../../src/contract/messages'
import type { ImportLine } from '../../src/contract/tenant-export'
import type { ShardContext } from './context'
import { TENANT_OWNER, getConsentRecord, newKeySlot, tenantSlot } from './consents'
import { IN, OUT, adjacencyKey, consentKey, nodeKey, ownedKey, ownedRelationKey, relationKey, subjectConsentKey, typePrefix, type Key } from './keys'
import { addToCount } from './deferred-writes'
import { fail, ok, type OpResult } from './result'
import { sealElement } from './sealing'
import { reindex } from './search-index'
import type { StoredElement } from './schema'

type ElementLine = Extract<ImportLine, { kind: 'node' | 'relation' }>

const nodeName = (n: NodeRef): string => `${n.ns}/${n.type}/${n.id}`

/** Why the batch cannot be applied, or undefined. */
function refusal(sc: ShardContext, tenant: string, lines: readonly ImportLine[]): string | undefined {
  const consents = new Set<string>()
  const nodes = new Set<string>()
  const consentKnown = (ref: string): boolean => ref === TENANT_OWNER || consents.has(ref) || getConsentRecord(sc.store, tenant, ref) !== undefined
  const nodeKnown = (n: NodeRef): boolean => nodes.has(nodeName(n)) || sc.store.nodes.get(nodeKey(tenant, n)) !== undefined
  for (const line of lines) {
    if (line.kind === 'consent') consents.add(line.ref)
    else if (!consentKnown(line.owner)) return `${line.kind} owned by consent "${line.owner}", which is neither here nor earlier in the import`
    if (line.kind === 'node') nodes.add(nodeName(line.node))
    if (line.kind === 'relation') {
      const end = [line.from, line.to].find((n) => !nodeKnown(n))
      if (end !== undefined) return `relation to node ${nodeName(end)}, which is neither here nor earlier in the import`
    }
  }
  return undefined
}

/** The element sealed under its owner's current key, or a locked one that nothing opens. */
function stored(sc: ShardContext, tenant: string, key: Key, line: ElementLine): StoredElement {
  const { store } = sc
  const meta = { c: line.created, b: line.createdBy, o: line.owner }
  const consent = line.owner === TENANT_OWNER ? undefined : getConsentRecord(store, tenant, line.owner)
  const slot = consent === undefined ? tenantSlot(store, tenant, true)! : consent.slot
  if (line.locked === true || consent?.status === 'revoked') {
    // Slot -1 is never a key's: a read answers revoked (the consent says so) or locked.
    return { ...meta, k: -1, s: new Uint8Array(0) }
  }
  return sealElement(store, key, slot, { ...meta, p: JSON.stringify(line.properties) })
}

function importConsent(sc: ShardContext, tenant: string, line: Extract<ImportLine, { kind: 'consent' }>): boolean {
  const key = consentKey(tenant, line.ref)
  if (sc.store.consents.get(key) !== undefined) return false
  const slot = newKeySlot(sc.store)
  sc.store.consents.putSync(key, {
    subject: line.subject, status: line.status, slot, revokedProperties: line.revokedProperties, created: line.created,
    ...(line.client === undefined ? {} : { client: line.client }), ...(line.changed === undefined ? {} : { changed: line.changed }),
  })
  sc.store.subjects.putSync(subjectConsentKey(tenant, line.subject, line.ref), 1)
  // Destroyed once committed, through the shred log like any revocation's key.
  if (line.status === 'revoked') sc.shred.push(slot)
  return true
}

function importNode(sc: ShardContext, tenant: string, line: Extract<ImportLine, { kind: 'node' }>): boolean {
  const { store, metamodel, blind } = sc
  const key = nodeKey(tenant, line.node)
  if (store.nodes.get(key) !== undefined) return false
  const value = stored(sc, tenant, key, line)
  store.nodes.putSync(key, value)
  store.owned.putSync(ownedKey(tenant, line.owner, line.node), 1)
  addToCount(store, typePrefix(tenant, line.node.ns, line.node.type), 1)
  if (value.k !== -1) reindex(store, metamodel, blind, tenant, line.node, {}, line.properties ?? {})
  return true
}

function importRelation(sc: ShardContext, tenant: string, line: Extract<ImportLine, { kind: 'relation' }>): boolean {
  const { store } = sc
  const rel = { from: line.from, to: line.to, rel: line.rel }
  const key = relationKey(tenant, rel)
  if (store.relations.get(key) !== undefined) return false
  store.relations.putSync(key, stored(sc, tenant, key, line))
  store.ownedRelations.putSync(ownedRelationKey(tenant, line.owner, rel), 1)
  store.adjacency.putSync(adjacencyKey(tenant, rel.from, rel.to, OUT, rel.rel), 1)
  store.adjacency.putSync(adjacencyKey(tenant, rel.to, rel.from, IN, rel.rel), 1)
  return true
}

/** Applies the batch; the answer counts what was added and what existed already. */
export function importBatch(sc: ShardContext, tenant: string, lines: readonly ImportLine[]): OpResult {
  const why = refusal(sc, tenant, lines)
  if (why !== undefined) return fail('validation_violation', `import refused: ${why}`)
  let added = 0
  for (const line of lines) {
    const done = line.kind === 'consent' ? importConsent(sc, tenant, line) : line.kind === 'node' ? importNode(sc, tenant, line) : importRelation(sc, tenant, line)
    if (done) added++
  }
  return ok(200, JSON.stringify({ added, existing: lines.length - added }))
}
