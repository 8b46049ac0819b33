// GET /{tenant}/metamodel[/nodes/{ns}/{type} | /relations/{6 segments}]: the
// definitions the `schema` URLs of every answer point to.
import { ApiError } from '../errors'
import type { GraphHandler } from './services'
import type { GraphParams } from './params'

type Spec = GraphHandler<GraphParams>

export const getMetamodel: Spec = {
  body: 'none',
  handle(s, ex, { tenant }) {
    ex.json(200, JSON.stringify(s.metamodel.forTenant(tenant)))
  },
}

export const getNodeType: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    const [ns, type] = [rest[1]!, rest[2]!]
    const def = s.metamodel.nodeType(tenant, ns, type)
    if (def === undefined) throw new ApiError('element_not_found', `node type ${ns}/${type} is not in the metamodel`)
    ex.json(200, JSON.stringify({ schema: s.urls.nodeSchema(tenant, ns, type), namespace: ns, type, ...def }))
  },
}

export const getRelationType: Spec = {
  body: 'none',
  handle(s, ex, { tenant, rest }) {
    const parts = rest.slice(1) as [string, string, string, string, string, string]
    const def = s.metamodel.relationType(tenant, parts)
    if (def === undefined) throw new ApiError('element_not_found', `relation type ${parts.join('/')} is not in the metamodel`)
    const [fromNs, fromType, toNs, toType, relNs, relType] = parts
    const schema = s.urls.relationSchema(tenant, {
      from: { ns: fromNs, type: fromType, id: '' }, to: { ns: toNs, type: toType, id: '' }, rel: { ns: relNs, type: relType, id: '' },
    })
    ex.json(200, JSON.stringify({ schema, from: `${fromNs}/${fromType}`, to: `${toNs}/${toType}`, relationship: `${relNs}/${relType}`, ...def }))
  },
}
