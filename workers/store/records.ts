// What a node or relation is on disk, and how it is rendered as the spec's
// JSON. Properties stay a JSON text end to end, so a read splices strings and
// never parses them again.
import type { NodeRef, RelationRef } from '../../src/shard/messages'
import type { Urls } from '../../src/model/urls'

export interface ElementRecord {
  /** created, epoch ms */
  c: number
  /** createdByHybrisClient: the client id of the token that created it */
  b: string
  /** owner: the consent reference that created it, or TENANT */
  o: string
  /** custom properties as a JSON object text */
  p: string
}

const J = JSON.stringify

/**
 * Custom properties after the system fields of a top-level object. A property
 * PUT may store `createdByHybrisClient` (spec 7 does not reserve it there);
 * the system field wins in the object form, so drop the custom one there.
 */
function propsTail(p: string): string {
  if (p === '{}') return '}'
  if (p.includes('"createdByHybrisClient"')) {
    const props = JSON.parse(p) as Record<string, unknown>
    delete props.createdByHybrisClient
    const text = J(props)
    return text === '{}' ? '}' : ',' + text.slice(1)
  }
  return ',' + p.slice(1)
}

export function nodeObject(urls: Urls, tenant: string, n: NodeRef, r: ElementRecord): string {
  return `{"id":${J(n.id)},"consent-reference":${J(r.o)},"created":${r.c},"createdByHybrisClient":${J(r.b)},"tenant":${J(tenant)},"schema":${J(urls.nodeSchema(tenant, n.ns, n.type))}${propsTail(r.p)}`
}

export function relationObject(urls: Urls, tenant: string, rel: RelationRef, r: ElementRecord): string {
  return `{"fid":${J(rel.from.id)},"tid":${J(rel.to.id)},"id":${J(rel.rel.id)},"schema":${J(urls.relationSchema(tenant, rel))},"fSchema":${J(urls.nodeSchema(tenant, rel.from.ns, rel.from.type))},"tSchema":${J(urls.nodeSchema(tenant, rel.to.ns, rel.to.type))},"consentReference":${J(r.o)},"created":${r.c},"createdByHybrisClient":${J(r.b)},"tenant":${J(tenant)}${propsTail(r.p)}`
}

/** The counter POST answer: the relation object plus the three creation times. */
export function counterResult(relationJson: string, from: ElementRecord, to: ElementRecord, relation: ElementRecord): string {
  return `${relationJson.slice(0, -1)},"toCreated":${to.c},"fromCreated":${from.c},"relationCreated":${relation.c}}`
}

export function relationChunk(urls: Urls, tenant: string, rel: RelationRef, r: ElementRecord): string {
  return `{"id":${J(rel.rel.id)},"fid":${J(rel.from.id)},"tid":${J(rel.to.id)},"tenant":${J(tenant)},"schema":${J(urls.relationSchema(tenant, rel))},"created":${r.c},"createdByHybrisClient":${J(r.b)},"locked":false,"consentReference":${J(r.o)},"properties":${r.p}}`
}

/** A node chunk of the neighbours stream; `relations` only on neighbour chunks. */
export function nodeChunk(urls: Urls, tenant: string, n: NodeRef, r: ElementRecord, relations: string[] | undefined): string {
  const rels = relations === undefined ? '' : `,"relations":[${relations.join(',')}]`
  return `{"id":${J(n.id)},"tenant":${J(tenant)},"schema":${J(urls.nodeSchema(tenant, n.ns, n.type))},"neighbours_url":${J(urls.neighbours(tenant, n))},"created":${r.c},"createdByHybrisClient":${J(r.b)},"consentReference":${J(r.o)},"locked":false,"properties":${r.p}${rels}}`
}
