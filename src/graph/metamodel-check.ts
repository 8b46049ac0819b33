// Spec 1.7 at the edge: enrichers store only what the metamodel defines.
// Writing an undeclared type, an undeclared property of a closed type, or a
// value of the wrong type is 400 validation_violation naming it. A value's
// type is checked by its schema (one compiled function per property type);
// which property is declared, and whether the type is open, is the metamodel's.
import { ApiError } from '../core/errors'
import { Type, type TSchema } from '@sinclair/typebox'
import { own } from '../model/own-key'
import { PROPERTY_TYPES, type Metamodel, type PropertyType, type TypeDef } from '../model/metamodel'
import { SCHEMAS } from '../schema/compiler'
import type { NodeRef, RelationRef } from '../contract/messages'

const violation = (message: string): ApiError => new ApiError('validation_violation', message)

/** What a value of each property type may be (null always: it clears the property), as schemas. */
const VALUE_SCHEMAS: Readonly<Record<PropertyType, TSchema>> = {
  string: Type.Unsafe({ type: ['string', 'null'] }),
  // a safe integer, as JavaScript reads it (Number.isSafeInteger)
  integer: Type.Unsafe({ type: ['integer', 'null'], minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
  number: Type.Unsafe({ type: ['number', 'null'] }),
  boolean: Type.Unsafe({ type: ['boolean', 'null'] }),
  object: Type.Unsafe({ type: ['object', 'null'] }),
  array: Type.Unsafe({ type: ['array', 'null'] }),
  any: Type.Unknown(),
}
const FITS = Object.fromEntries(PROPERTY_TYPES.map((type) => [type, SCHEMAS.fits(VALUE_SCHEMAS[type])])) as Record<PropertyType, (v: unknown) => boolean>

function checkProperties(def: TypeDef, what: string, props: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(props)) {
    const p = own(def.properties, name)
    if (p === undefined) {
      if (!def.open) throw violation(`property "${name}" is not declared for ${what}`)
      continue
    }
    if (!FITS[p.type](value)) throw violation(`property "${name}" of ${what} must be of type ${p.type}`)
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
  const p = own(def.properties, name)
  if (p === undefined || p.type !== 'integer') {
    throw violation(`counter "${name}" must be a declared integer property of relation type ${r.rel.ns}/${r.rel.type}`)
  }
}
