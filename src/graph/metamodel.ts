// GET /{tenant}/metamodel[/nodes/{ns}/{type} | /relations/{6 segments}]: the
// definitions the `schema` URLs of every answer point to.
import { ApiError } from '../core/errors'
import { graphMethod } from './services'
import { MetamodelNodeParams, MetamodelRelationParams } from './params'
import { NodeTypeDefinition, RelationTypeDefinition, TenantMetamodel } from './answers'

export const getMetamodel = graphMethod({
  body: 'none',
  answers: { 200: TenantMetamodel },
  summary: "The tenant's metamodel",
  handle(s, ex, { tenant }) {
    ex.json(200, JSON.stringify(s.metamodel.forTenant(tenant)))
  },
})

export const getNodeType = graphMethod({
  body: 'none',
  params: MetamodelNodeParams,
  answers: { 200: NodeTypeDefinition },
  errors: ['element_not_found'],
  summary: 'The definition of a node type',
  handle(s, ex, { tenant, params: { ns, type } }) {
    const def = s.metamodel.nodeType(tenant, ns, type)
    if (def === undefined) throw new ApiError('element_not_found', `node type ${ns}/${type} is not in the metamodel`)
    ex.json(200, JSON.stringify({ schema: s.urls.nodeSchema(tenant, ns, type), namespace: ns, type, ...def }))
  },
})

export const getRelationType = graphMethod({
  body: 'none',
  params: MetamodelRelationParams,
  answers: { 200: RelationTypeDefinition },
  errors: ['element_not_found'],
  summary: 'The definition of a relation type',
  handle(s, ex, { tenant, params: p }) {
    const parts = [p.fromNs, p.fromType, p.toNs, p.toType, p.relNs, p.relType] as const
    const def = s.metamodel.relationType(tenant, parts)
    if (def === undefined) throw new ApiError('element_not_found', `relation type ${parts.join('/')} is not in the metamodel`)
    const [fromNs, fromType, toNs, toType, relNs, relType] = parts
    const schema = s.urls.relationSchema(tenant, {
      from: { ns: fromNs, type: fromType, id: '' }, to: { ns: toNs, type: toType, id: '' }, rel: { ns: relNs, type: relType, id: '' },
    })
    ex.json(200, JSON.stringify({ schema, from: `${fromNs}/${fromType}`, to: `${toNs}/${toType}`, relationship: `${relNs}/${relType}`, ...def }))
  },
})
