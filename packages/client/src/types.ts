// Names for the service's request and answer shapes, all taken from the
// types openapi-typescript generates from the service's OpenAPI document at
// build time (./generated/openapi.ts): when a route's declaration changes,
// these change with it and the client stops compiling where it disagrees.
import type { components, paths } from './generated/openapi.js'

type Graph<S extends string> = `/graph/v1/{tenant}/${S}`
type Op<P extends keyof paths, M extends 'get' | 'put' | 'post' | 'delete'> = NonNullable<paths[P][M]>
type Responses<O> = O extends { responses: infer R } ? R : never
type ContentOf<R, Media extends string> = R extends { content: infer C } ? (Media extends keyof C ? C[Media] : never) : never

/** The JSON body of an operation's 200 or 201 answer. */
export type Ok<O, Media extends string = 'application/json'> = ContentOf<Responses<O>[Extract<keyof Responses<O>, 200 | 201>], Media>
/** The JSON body an operation takes. */
export type JsonBody<O> = O extends { requestBody?: infer B } ? ContentOf<NonNullable<B>, 'application/json'> : never

type NodeOp<M extends 'get' | 'put' | 'delete'> = Op<Graph<'nodes/{ns}/{type}/{id}'>, M>
type RelationOp<M extends 'get' | 'put' | 'delete'> = Op<Graph<'relations/{fromNs}/{fromType}/{fromId}/{toNs}/{toType}/{toId}/{relNs}/{relType}/{relId}'>, M>

/** The service's error body (every error; OAuth errors add `error` and `error_description`). */
export type ErrorBody = components['schemas']['Error']
/** The error types the service answers (GET /errors explains each). */
export type ErrorType = ErrorBody['type']

/** A node as GET nodes/{ns}/{type}/{id} answers it, or `{LOCKED: true}` when it cannot be decrypted. */
export type Node = Ok<NodeOp<'get'>>
/** The properties a PUT of a node merges. */
export type NodeProperties = JsonBody<NodeOp<'put'>>
/** A property's value, as PUT nodes/{ns}/{type}/{id}/{key} takes it and its GET answers it. */
export type PropertyValue = Ok<Op<Graph<'nodes/{ns}/{type}/{id}/{key}'>, 'get'>>
/** One element of a list read (GET nodes/{ns}/{type}). */
export type ListedNode = Ok<Op<Graph<'nodes/{ns}/{type}'>, 'get'>, 'application/x-ndjson'>
/** A relation as its GET answers it. */
export type Relation = Ok<RelationOp<'get'>>
/** The properties a PUT of a relation merges. */
export type RelationProperties = JsonBody<RelationOp<'put'>>
/** A counter's answer: the relation with the counter's new value. */
export type CounterResult = Ok<Op<Graph<'counters/{fromNs}/{fromType}/{fromId}/{toNs}/{toType}/{toId}/{relNs}/{relType}/{relId}/{counter}'>, 'post'>>
/** One chunk of a neighbours read: the source node first, then each neighbour with its relations. */
export type NeighbourChunk = Ok<Op<Graph<'neighbours/{ns}/{type}/{id}'>, 'get'>, 'application/x-ndjson'>

/** What POST consents takes. */
export type ConsentRequest = JsonBody<Op<Graph<'consents'>, 'post'>>
/** What POST consents answers. */
export type CreatedConsent = Ok<Op<Graph<'consents'>, 'post'>>
/** A consent as its GET answers it. */
export type Consent = Ok<Op<Graph<'consents/{ref}'>, 'get'>>
/** What PUT consents/{ref}/revokedProperties takes. */
export type RevokedProperties = JsonBody<Op<Graph<'consents/{ref}/revokedProperties'>, 'put'>>

/** One consent of a data subject (GET consents). */
export type ConsentEntry = Ok<Op<Graph<'consents'>, 'get'>>[number]
/** The query of a subject's consent list. */
export type ConsentListQuery = NonNullable<Op<Graph<'consents'>, 'get'>['parameters']['query']>
/** One element of a subject export (GET subject/export): the subject first, then its consents, nodes and relations. */
export type SubjectExportElement = Ok<Op<Graph<'subject/export'>, 'get'>, 'application/x-ndjson'>

/** A page of the event log (GET events). */
export type EventPage = Ok<Op<Graph<'events'>, 'get'>>
/** One event envelope (docs/manual/events.md), as the cursor read and the stream serve it. */
export type GraphEvent = EventPage['events'][number]
/** The query of a cursor read. */
export type EventQuery = NonNullable<Op<Graph<'events'>, 'get'>['parameters']['query']>

/** What POST webhooks takes. */
export type WebhookRequest = JsonBody<Op<Graph<'webhooks'>, 'post'>>
/** What POST webhooks answers (the signing secret, shown once). */
export type CreatedWebhook = Ok<Op<Graph<'webhooks'>, 'post'>>
/** A webhook as GET webhooks/{id} answers it. */
export type Webhook = Ok<Op<Graph<'webhooks/{id}'>, 'get'>>

/** The tenant's metamodel (GET metamodel). */
export type Metamodel = Ok<Op<Graph<'metamodel'>, 'get'>>

/** One line of a bulk request, as the service reads it. */
export type BulkLine = ContentOf<Op<Graph<'bulk'>, 'post'>['requestBody'], 'application/x-ndjson'>
/** One line of a bulk request's answer. */
export type BulkAnswerLine = Ok<Op<Graph<'bulk'>, 'post'>, 'application/x-ndjson'>

/** A client-credentials token answer (POST /oauth2/v1/token). */
export type TokenAnswer = Ok<Op<'/oauth2/v1/token', 'post'>>
