// Every operation an actor runs, in one table keyed by the operation's name:
// the compiler checks that each operation of src/contract/messages.ts has an
// entry, and the entry says whether it reads, writes (group commit) or
// streams (scans.ts).
import type { Operation, StreamOp } from '../../src/contract/messages'
import { createConsent, grantConsent, listSubjectConsents, readConsent, revokeConsent, setRevokedProperties } from '../store/consents'
import { appendEvent, head, readEvents } from '../store/events'
import type { ShardContext } from '../store/context'
import { countNodes, deleteNode, forgetSearchTerms, getNode, getNodeProperty, putNode, putNodeProperty } from '../store/nodes'
import { deleteRelation, getRelation, incrementCounter, putRelation } from '../store/relations'
import { fail, ok, type OpResult } from '../store/result'
import { shardPath } from '../store/shard-store'
import { backupShard } from '../crypto/backup-copy'
import { importBatch } from '../store/import-tenant'
import { createWebhook, deleteWebhook, listWebhooks, saveWebhookState, webhookTargets } from '../store/webhooks'

type OpName = Operation['op']
type Of<K extends OpName> = Extract<Operation, { op: K }>
type Run<K extends OpName> = (sc: ShardContext, op: Of<K>) => OpResult

type RunAsync<K extends OpName> = (sc: ShardContext, op: Of<K>) => Promise<OpResult>

export type Entry<K extends OpName> = { kind: 'read'; run: Run<K> } | { kind: 'write'; run: Run<K> } | { kind: 'stream' } | { kind: 'task'; run: RunAsync<K> }
export type OperationTable = { readonly [K in OpName]: Entry<K> }

const read = <K extends OpName>(run: Run<K>): Entry<K> => ({ kind: 'read', run })
const write = <K extends OpName>(run: Run<K>): Entry<K> => ({ kind: 'write', run })

/** `webhookKey` seals webhook secrets (store/webhooks.ts). */
export function operationTable(webhookKey: Buffer): OperationTable {
  return {
    getNode: read((sc, op) => getNode(sc, op.tenant, op.node)),
    getNodeProperty: read((sc, op) => getNodeProperty(sc, op.tenant, op.node, op.key)),
    countNodes: read((sc, op) => countNodes(sc, op.tenant, op.ns, op.type)),
    getRelation: read((sc, op) => getRelation(sc, op.tenant, op.relation)),
    getConsent: read((sc, op) => readConsent(sc.store, op.tenant, op.ref, op.caller)),
    listConsents: read((sc, op) => listSubjectConsents(sc.store, op.tenant, op.subject, op.after, op.limit)),
    readEvents: read((sc, op) => {
      const r = readEvents(sc.store, op.tenant, op.after, op.limit)
      if (r.kind === 'expired') return fail('cursor_expired', `events up to ${r.first - 1} are no longer kept; read from after=${r.first - 1}`)
      return ok(200, `{"events":[${r.events.join(',')}],"next":${r.next}}`)
    }),
    eventHead: read((sc, op) => ok(200, JSON.stringify(head(sc.store, op.tenant)))),
    listWebhooks: read((sc, op) => listWebhooks(sc.store, op.tenant, op.id)),
    webhookTargets: read((sc, op) => webhookTargets(sc.store, webhookKey, op.tenant)),

    putNode: write((sc, op) => putNode(sc, op.tenant, op.node, op.props, op.ctx)),
    putNodeProperty: write((sc, op) => putNodeProperty(sc, op.tenant, op.node, op.key, op.value, op.ctx)),
    deleteNode: write((sc, op) => deleteNode(sc, op.tenant, op.node, op.trace)),
    putRelation: write((sc, op) => putRelation(sc, op.tenant, op.relation, op.props, op.ctx)),
    deleteRelation: write((sc, op) => deleteRelation(sc, op.tenant, op.relation, op.trace)),
    incrementCounter: write((sc, op) => incrementCounter(sc, op.tenant, op.relation, op.name, op.ctx)),
    createConsent: write((sc, op) => createConsent(sc.store, op.tenant, op.subject, sc.now, op.client)),
    appendEvents: write((sc, op) => {
      for (const e of op.events) appendEvent(sc.store, op.tenant, e.operation, e.schema, e.payload, undefined, sc.now)
      sc.touched.add(op.tenant)
      return ok(204)
    }),
    revokeConsent: write((sc, op) => revokeConsent(sc.store, op.tenant, op.ref, op.caller, sc.shred, () => forgetSearchTerms(sc, op.tenant, op.ref))),
    grantConsent: write((sc, op) => grantConsent(sc.store, op.tenant, op.ref, op.caller)),
    setRevokedProperties: write((sc, op) => setRevokedProperties(sc.store, op.tenant, op.ref, op.names, op.caller)),
    createWebhook: write((sc, op) => createWebhook(sc.store, webhookKey, op.tenant, op.url, sc.now)),
    deleteWebhook: write((sc, op) => deleteWebhook(sc.store, op.tenant, op.id)),
    webhookProgress: write((sc, op) => saveWebhookState(sc.store, op.tenant, op.id, op.state)),

    backupShard: {
      kind: 'task',
      run: async (sc, op) => {
        await backupShard(sc.store.env, sc.store.keyFile.path, shardPath(op.dataDir, sc.store.shard))
        return ok(204)
      },
    },

    importTenant: write((sc, op) => importBatch(sc, op.tenant, op.lines)),

    listNodes: { kind: 'stream' },
    neighbours: { kind: 'stream' },
    exportTenant: { kind: 'stream' },
    exportSubject: { kind: 'stream' },
  }
}

export function kindOf(table: OperationTable, op: Operation): Entry<OpName>['kind'] {
  return table[op.op].kind
}

/** `op` as a stream operation when the table says it is one. */
export function asStream(table: OperationTable, op: Operation): StreamOp | undefined {
  return table[op.op].kind === 'stream' ? (op as StreamOp) : undefined
}

/** Runs a read or write operation (a stream is opened by scans.ts instead). */
export function runOperation(table: OperationTable, sc: ShardContext, op: Operation): OpResult {
  // The table is keyed by op.op, so the entry fits `op`; TypeScript cannot correlate the two.
  const entry = table[op.op] as Entry<OpName>
  if (entry.kind === 'stream' || entry.kind === 'task') throw new Error(`${op.op} is a ${entry.kind}, not a call`)
  return (entry.run as (sc: ShardContext, op: Operation) => OpResult)(sc, op)
}

/** Runs a task: its answer comes when its work is done, while the actor goes on serving. */
export function runTask(table: OperationTable, sc: ShardContext, op: Operation): Promise<OpResult> {
  const entry = table[op.op] as Entry<OpName>
  if (entry.kind !== 'task') throw new Error(`${op.op} is not a task`)
  return (entry.run as (sc: ShardContext, op: Operation) => Promise<OpResult>)(sc, op)
}
