// What the graph routes declare of their input (src/graph/routes.ts): the
// path captures as TypeBox schemas whose `x-check` names the length or
// reserved-name rule of src/graph/validate.ts (GRAPH_CHECKS), and the
// bodies. The dispatcher validates them in this order: path, query, body.
import { Type, type Static, type TRecord, type TString, type TUnknown } from '@sinclair/typebox'
import type { RelationRef } from '../contract/messages'
import type { AccessTokenRecord } from '../auth/models/auth-store'
import { CHECK, ERROR_MESSAGE } from '../http/schemas'

/** What the graph's authentication adds to every handler's input: the path's tenant and the caller's token. */
export interface GraphCaller {
  tenant: string
  token: AccessTokenRecord
}

/** A captured segment that must pass the named check of GRAPH_CHECKS. */
export const checked = (check: string, description?: string): TString => Type.String({ [CHECK]: check, ...(description === undefined ? {} : { description }) })

type RefParts = { ns: TString; type: TString; id: TString }

const nodeParts = (role: string): RefParts => ({ ns: checked(`${role} namespace`), type: checked(`${role} type`), id: checked(`${role} id`) })

export const NodeTypeParams = Type.Object({ ns: checked('node namespace'), type: checked('node type') })
export const NodeParams = Type.Object(nodeParts('node'))
export const NodePropertyParams = Type.Object({ ...nodeParts('node'), key: checked('property key') })

const relationParts = {
  fromNs: checked('source node namespace'), fromType: checked('source node type'), fromId: checked('source node id'),
  toNs: checked('target node namespace'), toType: checked('target node type'), toId: checked('target node id'),
  relNs: checked('relationship namespace'), relType: checked('relationship type'), relId: checked('relationship id'),
}
export const RelationParams = Type.Object(relationParts)
export const CounterParams = Type.Object({ ...relationParts, counter: checked('counter name') })

/** The relation a RelationParams path names. */
export function relationOf(p: Static<typeof RelationParams>): RelationRef {
  return {
    from: { ns: p.fromNs, type: p.fromType, id: p.fromId },
    to: { ns: p.toNs, type: p.toType, id: p.toId },
    rel: { ns: p.relNs, type: p.relType, id: p.relId },
  }
}

export const ConsentParams = Type.Object({ ref: checked('consent reference') })
/** The reference checked by the handler, after the body (as it always was for this route). */
export const ConsentRefParams = Type.Object({ ref: Type.String() })
export const WebhookParams = Type.Object({ id: checked('webhook id') })

export const MetamodelNodeParams = Type.Object({ ns: Type.String(), type: Type.String() })
export const MetamodelRelationParams = Type.Object({
  fromNs: Type.String(), fromType: Type.String(), toNs: Type.String(), toType: Type.String(), relNs: Type.String(), relType: Type.String(),
})

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'at most this many elements (0 to 999999999)', example: '100' })),
  q: Type.Optional(Type.String({ description: 'property:value, on a searchable property', example: 'email:a@example.com' })),
})

const subjectParam = Type.Optional(Type.String({ description: "the subject (manage scope); a user token's own `sub` without it", example: 'customer-42' }))

/** The subject a data subject's route acts on (src/graph/subject.ts). */
export const SubjectQuery = Type.Object({ subject: subjectParam })

export const SubjectConsentsQuery = Type.Object({
  subject: subjectParam,
  limit: Type.Optional(Type.String({ description: 'at most this many consents (0 to 999999999)', example: '50' })),
  after: Type.Optional(Type.String({ description: 'the consent reference to continue after', example: 'cr_AAAAAAAAAAAAAAAAAAAAAA' })),
})

export const EventsQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'the cursor: events after it' })),
  limit: Type.Optional(Type.String({ description: 'at most this many events' })),
  wait: Type.Optional(Type.String({ description: 'seconds to wait for a first event (long-poll)' })),
})

/** A PUT node body: an object of custom properties; each name passes `names` (reserved names, length). */
const propertiesOf = (names: string): TRecord<TString, TUnknown> =>
  Type.Record(Type.String(), Type.Unknown(), {
    propertyNames: { type: 'string', [CHECK]: names },
    [ERROR_MESSAGE]: 'the request body must be a JSON object of properties',
    example: { name: 'Ada', age: 36 },
  })

export const NodeProperties = propertiesOf('property name')
export const RelationProperties = propertiesOf('relation property name')

export const PropertyValue = Type.Unknown({ description: 'any JSON value', example: 'Ada' })

export const ConsentBody = Type.Object({ subject: Type.String({ pattern: '\\S' }) }, {
  [ERROR_MESSAGE]: 'the body must be {"subject": "<the end customer\'s id>"}',
  example: { subject: 'customer-42' },
})

export const PropertyNames = Type.Array(Type.String({ minLength: 1 }), {
  [ERROR_MESSAGE]: 'the body must be a JSON array of property names',
  example: ['email', 'phone'],
})

export const WebhookBody = Type.Object({ url: Type.String() }, {
  [ERROR_MESSAGE]: 'the body must be {"url": "https://..."}: the address to POST events to',
  example: { url: 'https://hooks.example.com/graph' },
})
