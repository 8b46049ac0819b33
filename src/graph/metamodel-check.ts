// Spec 1.7 at the edge: enrichers store only what the metamodel defines.
// Writing an undeclared type, an undeclared property of a closed type, or a
// value of the wrong type is 400 validation_violation naming it.
import { ApiError } from '../errors'
import type { Metamodel, PropertyDef, TypeDef } from '../model/metamodel'
import type { NodeRef, RelationRef } from '../contract/messages'

const violation = (message: string): ApiError => new ApiError('validation_violation', message)

function matches(def: PropertyDef, v: unknown): boolean {
  if (v === null) return true
  switch (def.type) {
    case 'string': return typeof v === 'string'
    case 'integer': return Number.isSafeInteger(v)
    case 'number': return typeof v === 'number' && Number.isFinite(v)
    case 'boolean': return typeof v === 'boolean'
    case 'object': return typeof v === 'object' && !Array.isArray(v)
    case 'array': return Array.isArray(v)
    case 'any': return true
  }
}

function checkProperties(def: TypeDef, what: string, props: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(props)) {
    const p = def.properties[name]
    if (p === undefined) {
      if (!def.open) throw violation(`property "${name}" is not declared for ${what}`)
      continue
    }
    if (!matches(p, value)) throw violation(`property "${name}" of ${what} must be of type ${p.type}`)
  }
}

export function nodeTypeOf(mm: Metamodel, tenant: string, n: Pick<NodeRef, 'ns' | 'type'>): TypeDef {
  const def = mm.nodeType(tenant, n.ns, n.type)
  if (def === undefined) throw violation(`node type ${n.ns}/${n.type} is not declared in the metamodel`)
  return def
}

export function relationTypeOf(mm: Metamodel, tenant: string, r: RelationRef): TypeDef {
  nodeTypeOf(mm, tenant, r.from)
  nodeTypeOf(mm, tenant, r.to)
  const parts = [r.from.ns, r.from.type, r.to.ns, r.to.type, r.rel.ns, r.rel.type] as const
  const def = mm.relationType(tenant, parts)
  if (def === undefined) throw violation(`relation type ${parts.join('/')} is not declared in the metamodel`)
  return def
}

export function checkNodeWrite(mm: Metamodel, tenant: string, n: NodeRef, props: Record<string, unknown>): void {
  checkProperties(nodeTypeOf(mm, tenant, n), `node type ${n.ns}/${n.type}`, props)
}

export function checkRelationWrite(mm: Metamodel, tenant: string, r: RelationRef, props: Record<string, unknown>): void {
  checkProperties(relationTypeOf(mm, tenant, r), `relation type ${r.rel.ns}/${r.rel.type}`, props)
}

/** Counters are declared integer properties of their relation type. */
export function checkCounter(mm: Metamodel, tenant: string, r: RelationRef, name: string): void {
  const def = relationTypeOf(mm, tenant, r)
  const p = def.properties[name]
  if (p === undefined || p.type !== 'integer') {
    throw violation(`counter "${name}" must be a declared integer property of relation type ${r.rel.ns}/${r.rel.type}`)
  }
}
