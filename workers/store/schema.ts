// Every value a shard stores, by database, beside the key layout in keys.ts:
// together the shard's whole disk format (src/shards/manifest.ts numbers it).
// Values are msgpack maps (shard-store.ts, VALUE_ENCODING); short field names
// keep them small. Types only: this module imports nothing at run time.
import type { WebhookState } from '../../src/contract/messages'

/** Identity and timestamps of a node or relation; they stay readable (they are what a locked chunk shows). */
export interface ElementMeta {
  /** created, epoch ms */
  c: number
  /** createdByHybrisClient: the client id of the token that created it */
  b: string
  /** owner: the consent reference that created it, or TENANT */
  o: string
}

/** A node or relation as stored: its custom properties sealed (sealing.ts). */
export interface StoredElement extends ElementMeta {
  /** key slot of the data key that sealed `s` */
  k: number
  /** sealed custom properties: AES-256-GCM of their JSON text */
  s: Uint8Array
}

export interface ConsentRecord {
  subject: string
  status: 'granted' | 'revoked'
  /** key slot of the current data key (destroyed while revoked) */
  slot: number
  revokedProperties: string[]
  created: number
  /** the client id of the token that created it (format 6; absent on older consents) */
  client?: string
  /** epoch ms of its last change: creation, revocation, grant, revoked properties (format 6; absent on older consents until changed) */
  changed?: number
}

/** The graph's operations; the authorization service's logs name their event types (subscriptionCreated, ...). */
export type Operation = 'CREATE' | 'DELETE' | 'STORE' | 'SCHEDULED' | 'DECAY' | (string & {})

export interface StoredEvent {
  /** time, epoch ms */
  t: number
  /** the envelope as JSON text, served as it is */
  j: string
}

/** The sequence range of a tenant's events still kept. */
export interface EventHead {
  first: number
  last: number
}

/** What a schedule emits when it is due. */
export interface ScheduleEntry {
  operation: Extract<Operation, 'SCHEDULED' | 'DECAY'>
  schema: string
  payload: Record<string, unknown>
}

export interface WebhookRecord extends WebhookState {
  url: string
  /** the signing secret, sealed under a key derived from the master key (webhooks.ts) */
  secret: Uint8Array
  created: number
}

/** Each database of a shard, by its LMDB name, with its key layout (keys.ts) and value type. */
export interface ShardValues {
  /** [tenant, ns, type, id] (nodeKey) */
  nodes: StoredElement
  /** [tenant, from..., to..., rel...] (relationKey) */
  relations: StoredElement
  /** [tenant, owner..., neighbour..., direction, rel...] (adjacencyKey) -> 1 */
  adjacency: number
  /** [tenant, ns, type] (typePrefix) -> number of nodes */
  counts: number
  /** [tenant, ns, type, property, term, id] (indexKey) -> 1 */
  index: number
  /** [tenant, owner, ns, type, id] (ownedKey) -> 1: the nodes of each owner (format 3) */
  owned: number
  /** [tenant, consentReference] (consentKey) */
  consents: ConsentRecord
  /** [tenant, subject, consentReference] (subjectConsentKey) -> 1: each subject's consents (format 6) */
  subjects: number
  /** [tenant, owner, from..., to..., rel...] (ownedRelationKey) -> 1: the relations of each owner (format 6) */
  ownedRelations: number
  /** [tenant] (tenantSlotKey) -> key slot of the tenant's own data key; NEXT_SLOT_KEY -> next free slot */
  keySlots: number
  /** [tenant, sequence] (eventKey) */
  events: StoredEvent
  /** [tenant] (eventHeadKey) */
  eventHeads: EventHead
  /** [dueAt, tenant, scheduleId] (scheduleKey) */
  schedules: ScheduleEntry
  /** [tenant, scheduleId] (scheduleIdKey) -> dueAt */
  scheduleIds: number
  /** [tenant, id] (webhookKey) */
  webhooks: WebhookRecord
}
