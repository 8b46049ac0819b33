// The client of one tenant's graph: every graph operation of the service,
// typed from its OpenAPI document, with the consent reference as an argument
// of every write that needs one.
import { BulkWrite, type BulkOptions } from './bulk.js'
import { eventStream, type EventStreamOptions, type WebSocketConstructor } from './events.js'
import { linkedAbort, ndjson } from './ndjson.js'
import { nodePath, relationPath, segment, typePath, type NodeRef, type RelationRef, type TypeRef } from './refs.js'
import { ClientCredentialsTokens, type ClientCredentials, type TokenSource } from './token.js'
import { fixedBearer, tokensBearer, Transport, type RetryOptions } from './transport.js'
import type {
  Consent, ConsentEntry, ConsentListQuery, ConsentRequest, CounterResult, CreatedConsent, CreatedWebhook, EventPage, EventQuery, GraphEvent, ListedNode, Metamodel,
  NeighbourChunk, Node, NodeProperties, PropertyValue, Relation, RelationProperties, RevokedProperties, SubjectExportElement, Webhook, WebhookRequest,
} from './types.js'
import { writeHeaders, type WriteOptions } from './write-headers.js'

export interface ClientOptions {
  /** The service's address, e.g. "https://graph.example.com" (no trailing slash needed). */
  baseUrl: string
  /** The tenant every call is for. */
  tenant: string
  /** Client credentials: tokens are fetched from /oauth2/v1/token and renewed before they expire. */
  credentials?: ClientCredentials
  /** Or a token you obtain yourself: a string, or a function asked before each call. */
  token?: TokenSource
  /** Retries of idempotent calls on 429, 503 and 507. */
  retry?: RetryOptions
  /** fetch to use (default: the global one). */
  fetch?: typeof fetch
  /** WebSocket constructor for the event stream (default: the global one; in Node 20, undici's `WebSocket`). */
  WebSocket?: WebSocketConstructor
}

/** Options of a read. */
export interface ReadOptions {
  signal?: AbortSignal
}

export interface ListOptions extends ReadOptions {
  /** One criterion on a searchable property: `name:"John Smith"`, `age:42`. */
  q?: string
  limit?: number
  /** With it: the nodes this consent owns plus the tenant's own; without: every node of the type. */
  consent?: string
}

/** Whose data: without `subject`, the user token's own; with it (manage scope), the subject named. */
export interface SubjectOptions extends ReadOptions {
  subject?: string
}

const subjectQuery = (options: SubjectOptions): Record<string, string> => (options.subject === undefined ? {} : { subject: options.subject })
const queryOf = (query: Record<string, string>): string => (Object.keys(query).length > 0 ? `?${new URLSearchParams(query)}` : '')

export class ProfileGraphClient {
  readonly tenant: string
  private readonly transport: Transport
  private readonly base: string
  private readonly WebSocketImpl: WebSocketConstructor | undefined

  constructor(options: ClientOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '')
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
    let bearer
    if (options.credentials !== undefined) bearer = tokensBearer(new ClientCredentialsTokens(`${baseUrl}/oauth2/v1/token`, options.credentials, fetchImpl))
    else if (options.token !== undefined) bearer = fixedBearer(options.token)
    else throw new TypeError('ProfileGraphClient needs credentials or a token')
    this.tenant = options.tenant
    this.base = `/graph/v1/${segment(options.tenant)}`
    this.transport = new Transport(baseUrl, bearer, fetchImpl, options.retry)
    this.WebSocketImpl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
  }

  /** The bearer token calls carry now (fetched or renewed if needed). */
  token(): Promise<string> {
    return this.transport.token()
  }

  // nodes

  getNode(node: NodeRef, options: ReadOptions = {}): Promise<Node> {
    return this.transport.json({ method: 'GET', path: `${this.base}/nodes/${nodePath(node)}`, signal: options.signal })
  }

  /** Creates the node or merges these properties into it (owned by `consent` when created). */
  putNode(node: NodeRef, properties: NodeProperties, consent: string, options: WriteOptions = {}): Promise<void> {
    return this.transport.none({ method: 'PUT', path: `${this.base}/nodes/${nodePath(node)}`, json: properties, headers: writeHeaders(consent, options), signal: options.signal })
  }

  /** Removes the node and its relations in both directions (idempotent). */
  deleteNode(node: NodeRef, options: WriteOptions = {}): Promise<void> {
    return this.transport.none({ method: 'DELETE', path: `${this.base}/nodes/${nodePath(node)}`, headers: writeHeaders(undefined, options), signal: options.signal })
  }

  getProperty(node: NodeRef, key: string, options: ReadOptions = {}): Promise<PropertyValue> {
    return this.transport.json({ method: 'GET', path: `${this.base}/nodes/${nodePath(node)}/${segment(key)}`, signal: options.signal })
  }

  /** Sets one property (creating the node when missing). */
  putProperty(node: NodeRef, key: string, value: PropertyValue, consent: string, options: WriteOptions = {}): Promise<void> {
    return this.transport.none({ method: 'PUT', path: `${this.base}/nodes/${nodePath(node)}/${segment(key)}`, json: value, headers: writeHeaders(consent, options), signal: options.signal })
  }

  /** The nodes of a type, streamed: one value per node as the loop asks for it; leaving the loop stops the download. */
  async *listNodes(type: TypeRef, options: ListOptions = {}): AsyncGenerator<ListedNode, void, undefined> {
    const query: Record<string, string> = {}
    if (options.q !== undefined) query['q'] = options.q
    if (options.limit !== undefined) query['limit'] = String(options.limit)
    const headers: Record<string, string> = { accept: 'application/x-ndjson' }
    if (options.consent !== undefined) headers['consent-reference'] = options.consent
    yield* this.stream<ListedNode>(`${this.base}/nodes/${typePath(type)}${queryOf(query)}`, headers, options.signal)
  }

  /** How many nodes the type has (X-Total-Count). */
  async countNodes(type: TypeRef, options: ReadOptions = {}): Promise<number> {
    const res = await this.transport.send({ method: 'HEAD', path: `${this.base}/nodes/${typePath(type)}`, signal: options.signal })
    return Number(res.headers.get('x-total-count'))
  }

  /** The source node's chunk, then each node one hop away with its relations to the source; streamed as the loop asks. */
  async *neighbours(node: NodeRef, options: ReadOptions = {}): AsyncGenerator<NeighbourChunk, void, undefined> {
    yield* this.stream<NeighbourChunk>(`${this.base}/neighbours/${nodePath(node)}`, { accept: 'application/x-ndjson' }, options.signal)
  }

  private async *stream<T>(path: string, headers: Record<string, string>, signal: AbortSignal | undefined): AsyncGenerator<T, void, undefined> {
    const abort = linkedAbort(signal)
    const res = await this.transport.send({ method: 'GET', path, headers, signal: abort.signal })
    yield* ndjson<T>(res, abort)
  }

  // relations and counters

  getRelation(relation: RelationRef, options: ReadOptions = {}): Promise<Relation> {
    return this.transport.json({ method: 'GET', path: `${this.base}/relations/${relationPath(relation)}`, signal: options.signal })
  }

  /** Creates the relation (and missing end nodes) or merges these properties into it. */
  putRelation(relation: RelationRef, properties: RelationProperties, consent: string, options: WriteOptions = {}): Promise<void> {
    return this.transport.none({ method: 'PUT', path: `${this.base}/relations/${relationPath(relation)}`, json: properties, headers: writeHeaders(consent, options), signal: options.signal })
  }

  deleteRelation(relation: RelationRef, options: WriteOptions = {}): Promise<void> {
    return this.transport.none({ method: 'DELETE', path: `${this.base}/relations/${relationPath(relation)}`, headers: writeHeaders(undefined, options), signal: options.signal })
  }

  /** Adds one to a counter of the relation (creating what is missing). Never retried: a retry could count twice. */
  incrementCounter(relation: RelationRef, counter: string, consent: string, options: WriteOptions = {}): Promise<CounterResult> {
    return this.transport.json({ method: 'POST', path: `${this.base}/counters/${relationPath(relation)}/${segment(counter)}`, headers: writeHeaders(consent, options), signal: options.signal })
  }

  // consents

  /** Creates a consent for a subject; its reference is what writes carry. */
  async createConsent(request: ConsentRequest, options: ReadOptions = {}): Promise<string> {
    const created = await this.transport.json<CreatedConsent>({ method: 'POST', path: `${this.base}/consents`, json: request, signal: options.signal })
    return created.consentReference
  }

  getConsent(ref: string, options: ReadOptions = {}): Promise<Consent> {
    return this.transport.json({ method: 'GET', path: `${this.base}/consents/${segment(ref)}`, signal: options.signal })
  }

  grantConsent(ref: string, options: ReadOptions = {}): Promise<void> {
    return this.transport.none({ method: 'POST', path: `${this.base}/consents/${segment(ref)}/grant`, signal: options.signal })
  }

  setRevokedProperties(ref: string, properties: RevokedProperties, options: ReadOptions = {}): Promise<void> {
    return this.transport.none({ method: 'PUT', path: `${this.base}/consents/${segment(ref)}/revokedProperties`, json: properties, signal: options.signal })
  }

  /** Revokes the consent: the data it owns can no longer be decrypted. */
  revokeConsent(ref: string, options: ReadOptions = {}): Promise<void> {
    return this.transport.none({ method: 'DELETE', path: `${this.base}/consents/${segment(ref)}`, signal: options.signal })
  }

  // a data subject's own consents and data: a user token acts on its own subject, a manage-scope token names one

  /** The subject's consents in the tenant, read a page at a time as the loop asks. */
  async *subjectConsents(options: SubjectOptions & { pageSize?: number } = {}): AsyncGenerator<ConsentEntry, void, undefined> {
    const pageSize = options.pageSize ?? 100
    let after: string | undefined
    for (;;) {
      const query: ConsentListQuery = { limit: String(pageSize), ...subjectQuery(options), ...(after === undefined ? {} : { after }) }
      const page = await this.transport.json<ConsentEntry[]>({ method: 'GET', path: `${this.base}/consents${queryOf(query)}`, signal: options.signal })
      yield* page
      if (page.length < pageSize) return
      after = page[page.length - 1]!.consentReference
    }
  }

  /** Everything stored under the subject's granted consents, decrypted, streamed: the subject first, then consents, nodes, relations. */
  async *exportSubject(options: SubjectOptions = {}): AsyncGenerator<SubjectExportElement, void, undefined> {
    yield* this.stream<SubjectExportElement>(`${this.base}/subject/export${queryOf(subjectQuery(options))}`, { accept: 'application/x-ndjson' }, options.signal)
  }

  /** Revokes every consent of the subject in the tenant (idempotent). */
  eraseSubject(options: SubjectOptions = {}): Promise<void> {
    return this.transport.none({ method: 'DELETE', path: `${this.base}/subject${queryOf(subjectQuery(options))}`, signal: options.signal })
  }

  // bulk writes

  /** A bulk request: write lines (bulkLines) to `writable`, read their answers from `results()`. */
  bulk(options: BulkOptions = {}): BulkWrite {
    return new BulkWrite(this.transport, this.base, options)
  }

  // events and webhooks

  /** One page of the event log after a cursor (with `wait` seconds, held until an event arrives). */
  readEvents(query: { [K in keyof EventQuery]?: EventQuery[K] | number } = {}, options: ReadOptions = {}): Promise<EventPage> {
    const q = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]))
    return this.transport.json({ method: 'GET', path: `${this.base}/events${queryOf(q)}`, signal: options.signal })
  }

  /** The event stream (WebSocket) from a cursor, resumed after disconnects; leaving the loop closes it. */
  events(options: EventStreamOptions = {}): AsyncGenerator<GraphEvent, void, undefined> {
    const WS = this.WebSocketImpl
    if (WS === undefined) throw new TypeError('no WebSocket: pass the WebSocket option (in Node 20: the WebSocket of undici)')
    return eventStream(this.transport, WS, this.base, (after) => this.readEvents({ after, limit: 1 }), options)
  }

  createWebhook(request: WebhookRequest, options: ReadOptions = {}): Promise<CreatedWebhook> {
    return this.transport.json({ method: 'POST', path: `${this.base}/webhooks`, json: request, signal: options.signal })
  }

  listWebhooks(options: ReadOptions = {}): Promise<Webhook[]> {
    return this.transport.json({ method: 'GET', path: `${this.base}/webhooks`, signal: options.signal })
  }

  getWebhook(id: string, options: ReadOptions = {}): Promise<Webhook> {
    return this.transport.json({ method: 'GET', path: `${this.base}/webhooks/${segment(id)}`, signal: options.signal })
  }

  deleteWebhook(id: string, options: ReadOptions = {}): Promise<void> {
    return this.transport.none({ method: 'DELETE', path: `${this.base}/webhooks/${segment(id)}`, signal: options.signal })
  }

  // metamodel

  getMetamodel(options: ReadOptions = {}): Promise<Metamodel> {
    return this.transport.json({ method: 'GET', path: `${this.base}/metamodel`, signal: options.signal })
  }
}
