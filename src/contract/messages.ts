// The messages between the front thread and the shard actors. Plain data
// only, so they cross MessagePorts through the one codec (src/contract/codec.ts).
import type { ErrorType } from '../core/errors'
import type { ImportLine } from './tenant-export'

export interface NodeRef { ns: string; type: string; id: string }
export interface RelationRef { from: NodeRef; to: NodeRef; rel: NodeRef }

/** A time rule from the scheduling or decay headers: when (epoch ms) and the parameter sent with it. */
export interface Timing { at: number; parameter: string | undefined }

/**
 * What a write carries about its caller: the consent reference it writes
 * with, the client, the request's trace id (platform-context-trace-id), and
 * the scheduling and decay headers.
 */
export interface WriteContext {
  consent: string
  client: string
  trace: string | undefined
  schedule: Timing | undefined
  decay: Timing | undefined
}

/** What webhook delivery persists after each attempt (src/events/webhook-delivery.ts). */
export interface WebhookState {
  /** the sequence of the last event the receiver acknowledged with a 2xx */
  cursor: number
  /** epoch ms of the first failure of the current run of failures; null when the last attempt succeeded */
  failingSince: number | null
  suspended: boolean
  lastError: string | null
}

/** A webhook as delivery needs it (`webhookTargets`), secret included. */
export interface WebhookTarget extends WebhookState {
  tenant: string
  id: string
  url: string
  secret: string
}

/** Who acts on a consent: the tenant (manage scope), or the end customer (a user token's `sub`). */
export type ConsentCaller = { kind: 'tenant' } | { kind: 'subject'; sub: string }

/** A single-criterion search: the property and the canonical JSON of the value. */
export interface Criterion { property: string; value: string | number | boolean }

export type ReadOp =
  | { op: 'getNode'; tenant: string; node: NodeRef }
  | { op: 'getNodeProperty'; tenant: string; node: NodeRef; key: string }
  | { op: 'countNodes'; tenant: string; ns: string; type: string }
  | { op: 'getRelation'; tenant: string; relation: RelationRef }
  | { op: 'getConsent'; tenant: string; ref: string; caller: ConsentCaller }
  /** A page of one subject's consents, in reference order after `after`: a JSON array. */
  | { op: 'listConsents'; tenant: string; subject: string; after: string | undefined; limit: number | undefined }
  | { op: 'readEvents'; tenant: string; after: number; limit: number }
  /** The sequence range of the tenant's log still kept: body {"first","last"}. */
  | { op: 'eventHead'; tenant: string }
  /** The tenant's webhooks without secrets (one of them with `id`): JSON array, or the object. */
  | { op: 'listWebhooks'; tenant: string; id: string | undefined }
  /** For delivery: the webhooks of one tenant, or of every tenant of the shard, with their secrets. */
  | { op: 'webhookTargets'; tenant: string | undefined }

export type WriteOp =
  | { op: 'putNode'; tenant: string; node: NodeRef; props: Record<string, unknown>; ctx: WriteContext }
  | { op: 'putNodeProperty'; tenant: string; node: NodeRef; key: string; value: unknown; ctx: WriteContext }
  | { op: 'deleteNode'; tenant: string; node: NodeRef; trace: string | undefined }
  | { op: 'putRelation'; tenant: string; relation: RelationRef; props: Record<string, unknown>; ctx: WriteContext }
  | { op: 'deleteRelation'; tenant: string; relation: RelationRef; trace: string | undefined }
  | { op: 'incrementCounter'; tenant: string; relation: RelationRef; name: string; ctx: WriteContext }
  /** `client`: the client id of the token that asks, kept with the consent (none for a token without one). */
  | { op: 'createConsent'; tenant: string; subject: string; client?: string }
  /** Events that are not graph changes (the authorization service's subscription events). */
  | { op: 'appendEvents'; tenant: string; events: { operation: string; schema: string; payload: Record<string, unknown> }[] }
  | { op: 'revokeConsent'; tenant: string; ref: string; caller: ConsentCaller }
  | { op: 'grantConsent'; tenant: string; ref: string; caller: ConsentCaller }
  | { op: 'setRevokedProperties'; tenant: string; ref: string; names: string[]; caller: ConsentCaller }
  | { op: 'createWebhook'; tenant: string; url: string }
  | { op: 'deleteWebhook'; tenant: string; id: string }
  /** Delivery state of a webhook: the cursor only moves forward; `failingSince` null once a delivery succeeds. */
  | { op: 'webhookProgress'; tenant: string; id: string; state: WebhookState }
  /** A batch of a tenant import (src/contract/tenant-export.ts): body {"added","existing"}. */
  | { op: 'importTenant'; tenant: string; lines: ImportLine[] }

/** How a stream's items are written: one JSON array, or one item per line (`application/x-ndjson`). */
export type StreamFormat = 'json' | 'ndjson'

/** A streamed read; the actor renders its slices in `format` (workers/actor/stream-body.ts). */
export type StreamOp = (
  | { op: 'listNodes'; tenant: string; ns: string; type: string; limit: number | undefined; owner: string | undefined; criterion: Criterion | undefined }
  | { op: 'neighbours'; tenant: string; node: NodeRef }
  /** Every line of a tenant export (src/contract/tenant-export.ts). */
  | { op: 'exportTenant'; tenant: string }
  /** Everything one subject has in the tenant (workers/store/subject-export.ts); `head` is the first element, written by the front thread. */
  | { op: 'exportSubject'; tenant: string; subject: string; head: string }
) & { format: StreamFormat }

/** Asynchronous work an actor runs beside its reads and writes. */
export type TaskOp =
  /** An online backup of the shard into `<dataDir>/shards/<n>` (src/backups/take-backup.ts); answers 204. */
  | { op: 'backupShard'; dataDir: string }

export type Operation = ReadOp | WriteOp | StreamOp | TaskOp

/** Front -> actor. `id` is unique per front thread; stream control refers to an open stream's id. */
export type ActorRequest =
  | {
    kind: 'call'; id: number; shard: number; operation: Operation
    /** Traces on only: the W3C traceparent of the call's span, the parent of its commit span in the actor (docs/design/tracing.md). */
    trace?: string
  }
  | { kind: 'more'; id: number }
  | { kind: 'cancel'; id: number }
  | { kind: 'shutdown'; id: number }
  /** Open these shards (owned by other actors) for reading; answered `ok` once they are open. */
  | { kind: 'openReaders'; id: number; shards: number[] }
  /** Drop whatever this thread cached of one consent (a revoke, grant or property revocation committed); answered `ok`. */
  | { kind: 'forgetConsent'; id: number; shard: number; tenant: string; ref: string }

/** Actor -> front: the answer to a call, or the next part of a stream. */
export type ActorReply =
  | {
    kind: 'ok'; id: number; status: number; body: string | undefined; total: number | undefined
    /** The shard's write counter this answer stays true for (a kept single answer: workers/store/kept-reads.ts; src/shards/kept-answers.ts). */
    kept?: number | undefined
  }
  | {
    kind: 'error'; id: number; type: ErrorType; message: string
    /** Seconds for Retry-After (cluster mode's 503: one lease period). */
    retryAfter?: number
    /** Cluster mode: refused before any of it ran (its shard is not served there now), so it may be sent to the next owner. */
    notRun?: true
  }
  /** A slice of a stream, as the text the front thread writes unchanged (one flat string: workers/actor/stream-body.ts says why not bytes). */
  | {
    kind: 'chunks'; id: number
    /** Bytes only when the front thread serves a neighbourhood it kept (src/shards/kept-answers.ts). */
    body: string | Uint8Array
    done: boolean
    /** With done, on a stream's one slice: the whole answer is kept, true while the shard's write counter is this. */
    kept?: number | undefined
  }
  | { kind: 'closed'; id: number }
  /** Unsolicited (id 0): the tenant's event log now ends at `last`; wakes long-polls and streams. */
  | { kind: 'events'; id: 0; tenant: string; last: number }
  /** Unsolicited (id 0): the tenant's webhooks were created or deleted; delivery reloads them. */
  | { kind: 'webhooks'; id: 0; tenant: string }
  /** Unsolicited (id 0), once: the actor's shards are open, verified and migrated. */
  | { kind: 'started'; id: 0 }
  /** Unsolicited (id 0), instead of `started`: a shard is damaged; the actor stops. */
  | { kind: 'refused'; id: 0; message: string }
  /** Unsolicited (id 0), about once a second while there is something to say: what each shard did since (src/shards/shard-stats.ts). */
  | { kind: 'stats'; id: 0; shards: ShardStats[] }
  /** Unsolicited (id 0): a log record of the actor; `requests` are the calls it concerns (the front thread names their request ids). */
  /** Cluster mode: this actor gained or lost a shard's lease (epoch of the lease it held or now holds). */
  | { kind: 'ownership'; id: 0; shard: number; owned: boolean; epoch: number }
  | { kind: 'log'; id: 0; level: 'error' | 'warn' | 'info'; message: string; error: string | undefined; requests: number[] }

/** A shard's figures since the last report (lists of observations) and now (map sizes). */
export interface ShardStats {
  shard: number
  batchSizes: number[]
  commitSeconds: number[]
  flushSeconds: number[]
  eventsAppended: number
  /** Data keys destroyed (consents revoked) since the last report. */
  keysDestroyed: number
  /** The shard journal's fdatasyncs and appended bytes, and LMDB's own syncs (checkpoints), since the last report. */
  journalSyncs: number
  journalBytes: number
  lmdbSyncs: number
  mapUsedBytes: number
  mapSizeBytes: number
}

/** workerData of a shard actor. */
export interface ActorConfig {
  dataDir: string
  shards: number[]
  publicUrl: string
  metamodel: import('../model/metamodel').MetamodelDoc
  /** The master key, which wraps the shard's data keys (src/crypto/master-key.ts). */
  masterKey: Uint8Array
  /** Events older than this are dropped (EVENT_RETENTION). */
  eventRetentionMs: number
  /** At most this many events are kept per tenant. */
  eventRetentionCount: number
  /** The data directory existed before this start: every shard must already have its files. */
  existing: boolean
  /** The disk format the shards are in, and the one to migrate them to (src/shards/manifest.ts). */
  formatOnDisk: number
  formatVersion: number
  /** Where destroyed data keys are logged before their slots are zeroed (src/crypto/shred-log.ts). */
  shredLog: string
  /** The installation's generation (manifest.json), written on each shred-log line. */
  generation: string
  /** Set on a restored backup: apply the shred-log lines of this generation before serving. */
  restore: { generation: string | undefined } | undefined
  /** Cluster mode (docs/design/replication.md): each shard is served only under a lease; undefined = the single-machine mode. */
  cluster: import('../config/cluster-options').ClusterOptions | undefined
  /** One write counter per shard, shared by every actor (workers/store/write-generations.ts). */
  writeGenerations: Int32Array
  /** Traces on (src/config/trace-options.ts): the actor exports the spans of its commits; undefined: off. */
  traces: import('../config/trace-options').TraceOptions | undefined
}
