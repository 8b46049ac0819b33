// The metamodel of the bootstrap file (docs/design/contracts.md): which node and
// relation types exist per tenant (or for every tenant under "*"), who owns
// them and which properties they declare. Pure data + lookups, used by the
// front thread (q validation, metamodel reads) and by the shard actors (what
// to index).
import { own } from './own-key'

export type PropertyType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'any'
export const PROPERTY_TYPES: readonly PropertyType[] = ['string', 'integer', 'number', 'boolean', 'object', 'array', 'any']

export interface PropertyDef {
  type: PropertyType
  searchable: boolean
}

export interface TypeDef {
  owner: 'customer' | 'tenant'
  open: boolean
  properties: Record<string, PropertyDef>
}

export interface TenantMetamodel {
  /** Keyed by "ns/type". */
  nodes: Record<string, TypeDef>
  /** Keyed by "fromNs/fromType/toNs/toType/relNs/relType". */
  relations: Record<string, TypeDef>
}

/** Keyed by tenant id or "*". */
export type MetamodelDoc = Record<string, TenantMetamodel>

export class Metamodel {
  constructor(readonly doc: MetamodelDoc) {}

  /** A tenant's own definition of a type replaces the "*" one. */
  nodeType(tenant: string, ns: string, type: string): TypeDef | undefined {
    const key = `${ns}/${type}`
    return own(own(this.doc, tenant)?.nodes, key) ?? own(own(this.doc, '*')?.nodes, key)
  }

  relationType(tenant: string, parts: readonly [string, string, string, string, string, string]): TypeDef | undefined {
    const key = parts.join('/')
    return own(own(this.doc, tenant)?.relations, key) ?? own(own(this.doc, '*')?.relations, key)
  }

  /** Names of the searchable properties of a node type (empty when the type is undeclared). */
  searchable(tenant: string, ns: string, type: string): readonly string[] {
    const def = this.nodeType(tenant, ns, type)
    if (def === undefined) return []
    return Object.keys(def.properties).filter((p) => own(def.properties, p)?.searchable === true)
  }

  /** The effective metamodel of one tenant: "*" overlaid by its own definitions. */
  forTenant(tenant: string): TenantMetamodel {
    const all = own(this.doc, '*')
    const mine = own(this.doc, tenant)
    return {
      nodes: { ...all?.nodes, ...mine?.nodes },
      relations: { ...all?.relations, ...mine?.relations },
    }
  }
}
