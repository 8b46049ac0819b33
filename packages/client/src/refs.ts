// The graph's addresses: a type, a node, a relation, as the paths under
// /graph/v1/{tenant}/ spell them (each segment percent-encoded, so "/" may
// be part of an id).
export interface TypeRef {
  ns: string
  type: string
}

export interface NodeRef extends TypeRef {
  id: string
}

/** A relation: its two end nodes and the relationship (namespace, type, id). */
export interface RelationRef {
  from: NodeRef
  to: NodeRef
  rel: NodeRef
}

const e = encodeURIComponent

export const typePath = (t: TypeRef): string => `${e(t.ns)}/${e(t.type)}`
export const nodePath = (n: NodeRef): string => `${typePath(n)}/${e(n.id)}`
export const relationPath = (r: RelationRef): string => `${nodePath(r.from)}/${nodePath(r.to)}/${nodePath(r.rel)}`

/** Path segments of the graph API's relative paths. */
export const segment = e
