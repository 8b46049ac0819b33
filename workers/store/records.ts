// How a node or relation is rendered as the spec's JSON (schema.ts has what
// it is on disk). Custom properties are stored sealed (sealing.ts); once
// opened they are a JSON text that the renderers splice, never re-parse.
import type { NodeRef, RelationRef } from '../../src/contract/messages'
import type { Urls } from '../../src/contract/urls'
import type { ElementMeta } from './schema'

/** An element whose properties could be opened (in memory only): `p` is their JSON object text. */
export interface ElementRecord extends ElementMeta {
  p: string
}

const J = JSON.stringify

/**
 * Custom properties after the system fields of a top-level object. Writes
 * refuse names that would collide, except `createdByHybrisClient` through a
 * property PUT (spec 7 does not reserve it there); whatever is stored, the
 * system field wins and the custom one is left out of the object form.
 */
function propsTail(p: string, guarded: readonly string[]): string {
  if (p === '{}') return '}'
  if (guarded.some((name) => p.includes(`"${name}"`))) {
    const props = JSON.parse(p) as Record<string, unknown>
    for (const name of guarded) delete props[name]
    const text = J(props)
    return text === '{}' ? '}' : ',' + text.slice(1)
  }
  return ',' + p.slice(1)
}

const NODE_GUARDED = ['createdByHybrisClient']
/** The counter answer adds the three creation times, so they are guarded here too. */
const RELATION_GUARDED = ['createdByHybrisClient', 'fSchema', 'tSchema', 'toCreated', 'fromCreated', 'relationCreated']

/** The spec's placeholder for an element that cannot be decrypted. */
export const LOCKED_PLACEHOLDER = '{"LOCKED":true}'

export function nodeObject(urls: Urls, tenant: string, n: NodeRef, r: ElementRecord): string {
  return `{"id":${J(n.id)},"consent-reference":${J(r.o)},"created":${r.c},"createdByHybrisClient":${J(r.b)},"tenant":${J(tenant)},"schema":${J(urls.nodeSchema(tenant, n.ns, n.type))}${propsTail(r.p, NODE_GUARDED)}`
}

export function relationObject(urls: Urls, tenant: string, rel: RelationRef, r: ElementRecord): string {
  return `{"fid":${J(rel.from.id)},"tid":${J(rel.to.id)},"id":${J(rel.rel.id)},"schema":${J(urls.relationSchema(tenant, rel))},"fSchema":${J(urls.nodeSchema(tenant, rel.from.ns, rel.from.type))},"tSchema":${J(urls.nodeSchema(tenant, rel.to.ns, rel.to.type))},"consentReference":${J(r.o)},"created":${r.c},"createdByHybrisClient":${J(r.b)},"tenant":${J(tenant)}${propsTail(r.p, RELATION_GUARDED)}`
}

/** The counter POST answer: the relation object plus the three creation times. */
export function counterResult(relationJson: string, from: ElementMeta, to: ElementMeta, relation: ElementMeta): string {
  return `${relationJson.slice(0, -1)},"toCreated":${to.c},"fromCreated":${from.c},"relationCreated":${relation.c}}`
}

/** A relation chunk; `p` undefined renders it locked with empty properties. */
export function relationChunk(urls: Urls, tenant: string, rel: RelationRef, r: ElementMeta, p: string | undefined): string {
  return `{"id":${J(rel.rel.id)},"fid":${J(rel.from.id)},"tid":${J(rel.to.id)},"tenant":${J(tenant)},"schema":${J(urls.relationSchema(tenant, rel))},"created":${r.c},"createdByHybrisClient":${J(r.b)},"locked":${p === undefined},"consentReference":${J(r.o)},"properties":${p ?? '{}'}}`
}

/**
 * A node chunk of the neighbours stream without its end: what it says of the
 * node alone (kept rendered: chunk-cache.ts); `p` undefined renders it locked.
 */
export function nodeChunkHead(urls: Urls, tenant: string, n: NodeRef, r: ElementMeta, p: string | undefined): string {
  return `{"id":${J(n.id)},"tenant":${J(tenant)},"schema":${J(urls.nodeSchema(tenant, n.ns, n.type))},"neighbours_url":${J(urls.neighbours(tenant, n))},"created":${r.c},"createdByHybrisClient":${J(r.b)},"consentReference":${J(r.o)},"locked":${p === undefined},"properties":${p ?? '{}'}`
}

/** The whole node chunk: `relations` only on neighbour chunks. */
export function closeNodeChunk(head: string, relations: string[] | undefined): string {
  return relations === undefined ? head + '}' : `${head},"relations":[${relations.join(',')}]}`
}

/** A node chunk of the neighbours stream; `relations` only on neighbour chunks; `p` undefined renders it locked. */
export function nodeChunk(urls: Urls, tenant: string, n: NodeRef, r: ElementMeta, p: string | undefined, relations: string[] | undefined): string {
  return closeNodeChunk(nodeChunkHead(urls, tenant, n, r, p), relations)
}
