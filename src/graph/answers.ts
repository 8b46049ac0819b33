// What the graph routes answer (src/graph/routes.ts): the bodies' schemas,
// as the shard actors render them (workers/store/records.ts, consents.ts,
// webhooks.ts). The document lists them and the contract test
// (test/http/openapi-contract.test.ts) holds every answer to them.
import { Type, type TSchema } from '@sinclair/typebox'
import { jsonValue } from '../http/json-value'
import { MEDIA } from '../http/media-type'
import { NO_BODY, type AnswerSpec } from '../http/route'

const url = (description: string): TSchema => Type.String({ description })
const epochMs = (description: string): TSchema => Type.Integer({ description: `${description}, epoch milliseconds` })
const CUSTOM = { additionalProperties: true, description: 'the custom properties are fields of the object too' }

/** An element that cannot be decrypted (its consent revoked, or its key destroyed before a new grant). */
export const LockedPlaceholder = Type.Object({ LOCKED: Type.Literal(true) }, { additionalProperties: false })

export const NodeObject = Type.Object({
  id: Type.String(),
  'consent-reference': Type.String({ description: 'the owner: a consent reference, or TENANT' }),
  created: epochMs('creation time'),
  createdByHybrisClient: Type.String({ description: 'the client that created it' }),
  tenant: Type.String(),
  schema: url('<metamodel>/nodes/<namespace>/<type>'),
}, { ...CUSTOM, example: { id: 'john', 'consent-reference': 'cr_AAAAAAAAAAAAAAAAAAAAAA', created: 1700000000000, createdByHybrisClient: 'enricher', tenant: 'demo', schema: 'https://graph.example.com/graph/v1/demo/metamodel/nodes/core/customer', name: 'John' } })

export const NodeOrLocked = Type.Union([NodeObject, LockedPlaceholder])

const relationFields = {
  fid: Type.String({ description: 'source node id' }),
  tid: Type.String({ description: 'target node id' }),
  id: Type.String({ description: 'relationship id' }),
  schema: url('<metamodel>/relations/<fromNs>/<fromType>/<toNs>/<toType>/<relNs>/<relType>'),
  fSchema: url('schema of the source node'),
  tSchema: url('schema of the target node'),
  consentReference: Type.String(),
  created: epochMs('creation time'),
  createdByHybrisClient: Type.String(),
  tenant: Type.String(),
}

export const RelationObject = Type.Object(relationFields, CUSTOM)

export const CounterResult = Type.Object({
  ...relationFields,
  toCreated: epochMs('target node creation'),
  fromCreated: epochMs('source node creation'),
  relationCreated: epochMs('relation creation'),
}, { additionalProperties: true, description: 'the relation, its three creation times and the counter (an integer field named after it)' })

const chunkFields = {
  id: Type.String(),
  tenant: Type.String(),
  schema: Type.String(),
  created: epochMs('creation time'),
  createdByHybrisClient: Type.String(),
  consentReference: Type.String(),
  locked: Type.Boolean({ description: 'true when it cannot be decrypted (properties then {})' }),
  properties: Type.Record(Type.String(), Type.Unknown()),
}

export const RelationChunk = Type.Object({ ...chunkFields, fid: Type.String(), tid: Type.String() }, { additionalProperties: false })

export const NodeChunk = Type.Object({
  ...chunkFields,
  neighbours_url: url('the neighbours address of this node'),
  relations: Type.Optional(Type.Array(RelationChunk, { description: 'on neighbour chunks: the relations joining it to the source' })),
}, { additionalProperties: false })

/** A streamed list: a JSON array, or one element per line with Accept: application/x-ndjson. */
const streamed = (item: TSchema): AnswerSpec => ({ content: { 'application/json': Type.Array(item), [MEDIA.ndjson]: item } })

export const NodeList = streamed(NodeOrLocked)
export const Neighbours = { ...streamed(NodeChunk), description: 'the source node chunk first, then each node one hop away' }

export const NodeCount: AnswerSpec = { headers: { 'x-total-count': Type.String({ pattern: '^[0-9]+$', description: 'the number of nodes of the type' }) } }

export const PropertyValueAnswer = jsonValue('the raw JSON value of the property, as the PUT took it')

export const CreatedConsent = Type.Object({ consentReference: Type.String({ pattern: '^cr_' }) }, { additionalProperties: false })

export const ConsentView = Type.Object({
  consentReference: Type.String(),
  subject: Type.String(),
  status: Type.Union([Type.Literal('granted'), Type.Literal('revoked')]),
  revokedProperties: Type.Array(Type.String()),
}, { additionalProperties: false })

const consentEntryFields = {
  consentReference: Type.String(),
  subject: Type.String(),
  status: Type.Union([Type.Literal('granted'), Type.Literal('revoked')]),
  revokedProperties: Type.Array(Type.String()),
  created: epochMs('creation time'),
  changed: Type.Optional(epochMs('last change (absent on consents from before it was recorded)')),
  clientId: Type.Optional(Type.String({ description: 'the client whose token created it (absent on consents from before it was recorded)' })),
}

/** One consent in a subject's list (GET consents). */
export const ConsentEntry = Type.Object(consentEntryFields, { additionalProperties: false })
export const ConsentList = Type.Array(ConsentEntry)

const nodeRefObject = Type.Object({ ns: Type.String(), type: Type.String(), id: Type.String() }, { additionalProperties: false })
const exportedData = {
  created: epochMs('creation time'),
  createdBy: Type.String({ description: 'the client that created it' }),
  owner: Type.String({ description: 'the consent reference that owns it' }),
  properties: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'decrypted; absent when locked' })),
  locked: Type.Optional(Type.Literal(true)),
}

/** One element of a subject export (docs/manual/graph-api.md, "A data subject's own consents and data"). */
export const SubjectExportElement = Type.Union([
  Type.Object({
    kind: Type.Literal('subject'), subject: Type.String(), tenant: Type.String(),
    account: Type.Union([Type.Null(), Type.Object({
      username: Type.String(), email: Type.String(),
      tenants: Type.Record(Type.String(), Type.Array(Type.String())),
      identityProviders: Type.Array(Type.Object({ provider: Type.String(), subject: Type.String() }, { additionalProperties: false })),
    }, { additionalProperties: false })]),
  }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('consent'), ...consentEntryFields, erased: Type.Optional(Type.Literal(true)) }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('node'), node: nodeRefObject, ...exportedData }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('relation'), from: nodeRefObject, to: nodeRefObject, rel: nodeRefObject, ...exportedData }, { additionalProperties: false }),
])

export const SubjectExport = { ...streamed(SubjectExportElement), description: 'the subject and account first, then each consent, then each node and relation of the granted consents' }

/** One event as the log keeps it (workers/store/events.ts): the cursor read, the stream and webhooks serve it byte for byte. */
export const EventEnvelope = Type.Object({
  id: Type.String({ description: "a new UUID per event, or the request's platform-context-trace-id" }),
  sequence: Type.Integer({ description: 'the cursor: per tenant, from 1, one more per event' }),
  tenant: Type.String(),
  operation: Type.String({ description: 'CREATE, DELETE, STORE, SCHEDULED or DECAY' }),
  schema: url('the metamodel address of what changed'),
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'what changed: the id, the consent reference and more (docs/manual/events.md)' }),
  time: epochMs('when it happened'),
}, { additionalProperties: false, description: 'an event envelope (docs/manual/events.md)' })

export const EventPage = Type.Object({
  events: Type.Array(EventEnvelope),
  next: Type.Integer({ description: 'the cursor to read after' }),
}, { additionalProperties: false })

const webhookView = {
  id: Type.String(),
  url: Type.String(),
  created: epochMs('registration time'),
  cursor: Type.Integer({ description: 'the last event delivered' }),
  failingSince: Type.Union([Type.Integer(), Type.Null()]),
  suspended: Type.Boolean(),
  lastError: Type.Union([Type.String(), Type.Null()]),
}

export const CreatedWebhook = Type.Object({ id: Type.String(), url: Type.String(), secret: Type.String({ description: 'signs every delivery; shown only here' }) }, { additionalProperties: false })
export const WebhookView = Type.Object(webhookView, { additionalProperties: false })
export const WebhookList = Type.Array(WebhookView)

const PropertyDef = Type.Object({
  type: Type.Union(['string', 'integer', 'number', 'boolean', 'object', 'array', 'any'].map((t) => Type.Literal(t))),
  searchable: Type.Boolean(),
})
const typeDefFields = {
  owner: Type.Union([Type.Literal('customer'), Type.Literal('tenant')]),
  open: Type.Boolean(),
  properties: Type.Record(Type.String(), PropertyDef),
}
const TypeDef = Type.Object(typeDefFields)

export const TenantMetamodel = Type.Object({
  nodes: Type.Record(Type.String(), TypeDef, { description: 'keyed by ns/type' }),
  relations: Type.Record(Type.String(), TypeDef, { description: 'keyed by fromNs/fromType/toNs/toType/relNs/relType' }),
})

export const NodeTypeDefinition = Type.Object({ schema: Type.String(), namespace: Type.String(), type: Type.String(), ...typeDefFields })
export const RelationTypeDefinition = Type.Object({ schema: Type.String(), from: Type.String(), to: Type.String(), relationship: Type.String(), ...typeDefFields })

export const ExportLine = Type.Object({
  kind: Type.Union([Type.Literal('metamodel'), Type.Literal('consent'), Type.Literal('node'), Type.Literal('relation')]),
}, { additionalProperties: true, description: 'one line of the export (docs/manual/tenant-transfer.md)' })

export const ExportStream: AnswerSpec = { content: { [MEDIA.ndjson]: ExportLine } }

export const ImportResult = Type.Object({ added: Type.Integer(), existing: Type.Integer() }, { additionalProperties: false })

export { NO_BODY }
