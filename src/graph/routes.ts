// The graph service's routes under /graph/v1/{tenant}/: a pattern (":name"
// captures a segment) and per method the handler (with its schemas,
// src/graph/params.ts) and the scope. To add a route: write the handler with
// graphMethod (src/graph/services.ts) and add its line here (docs/design/architecture.md).
import { MANAGE_SCOPE, VIEW_SCOPE } from '../auth/helpers/bearer'
import type { RouteTable } from '../http/route'
import * as webhooks from './webhook-routes'
import type { GraphHandler, GraphServices } from './services'
import { bulkWrite } from './bulk'
import * as consents from './consents'
import { readEvents } from './events'
import * as meta from './metamodel'
import { getNeighbours } from './neighbours'
import * as nodes from './nodes'
import type { GraphCaller } from './params'
import * as relations from './relations'
import * as subject from './subject'
import * as transfer from './tenant-transfer'

const view = (spec: GraphHandler): GraphHandler => ({ ...spec, scope: VIEW_SCOPE })
const manage = (spec: GraphHandler): GraphHandler => ({ ...spec, scope: MANAGE_SCOPE })
const manageOrSubject = (spec: GraphHandler): GraphHandler => ({ ...spec, scope: MANAGE_SCOPE, allowSubject: true })
/** A write that may also be a line of a bulk request (src/graph/bulk.ts). */
const inBulk = (spec: GraphHandler): GraphHandler => ({ ...spec, inBulk: true })

export const GRAPH_ROUTES: RouteTable<GraphServices, GraphCaller> = [
  ['nodes/:ns/:type', { HEAD: view(nodes.countNodes), GET: view(nodes.listNodes) }],
  ['nodes/:ns/:type/:id', { GET: view(nodes.getNode), PUT: inBulk(manage(nodes.putNode)), DELETE: inBulk(manage(nodes.deleteNode)) }],
  ['nodes/:ns/:type/:id/:key', { GET: view(nodes.getNodeProperty), PUT: inBulk(manage(nodes.putNodeProperty)) }],
  ['relations/:fromNs/:fromType/:fromId/:toNs/:toType/:toId/:relNs/:relType/:relId',
    { GET: view(relations.getRelation), PUT: inBulk(manage(relations.putRelation)), DELETE: inBulk(manage(relations.deleteRelation)) }],
  ['counters/:fromNs/:fromType/:fromId/:toNs/:toType/:toId/:relNs/:relType/:relId/:counter', { POST: inBulk(manage(relations.incrementCounter)) }],
  ['neighbours/:ns/:type/:id', { GET: view(getNeighbours) }],
  ['consents', { GET: manageOrSubject(subject.listSubjectConsents), POST: inBulk(manage(consents.createConsent)) }],
  ['consents/:ref', { GET: manageOrSubject(consents.getConsent), DELETE: inBulk(manageOrSubject(consents.revokeConsent)) }],
  ['consents/:ref/grant', { POST: inBulk(manageOrSubject(consents.grantConsent)) }],
  ['consents/:ref/revokedProperties', { PUT: inBulk(manageOrSubject(consents.setRevokedProperties)) }],
  // A data subject's own data: a user token acts on its `sub`, a manage-scope token names the subject.
  ['subject', { DELETE: manageOrSubject(subject.eraseSubject) }],
  ['subject/export', { GET: manageOrSubject(subject.exportSubject) }],
  ['events', { GET: view(readEvents) }],
  // The WebSocket stream is upgraded before routing (src/graph/ws-stream.ts); a plain GET lands here.
  ['events/stream', { GET: view(webhooks.streamWithoutUpgrade) }],
  ['webhooks', { GET: manage(webhooks.listWebhooks), POST: manage(webhooks.createWebhook) }],
  ['webhooks/:id', { GET: manage(webhooks.getWebhook), DELETE: manage(webhooks.deleteWebhook) }],
  ['metamodel', { GET: view(meta.getMetamodel) }],
  ['metamodel/nodes/:ns/:type', { GET: view(meta.getNodeType) }],
  ['metamodel/relations/:fromNs/:fromType/:toNs/:toType/:relNs/:relType', { GET: view(meta.getRelationType) }],
  ['export', { GET: manage(transfer.exportTenant) }],
  ['import', { POST: manage(transfer.importTenant) }],
  // A user token passes for the consent lines of its own subject; each line is checked as its own route.
  ['bulk', { POST: manageOrSubject(bulkWrite) }],
]
