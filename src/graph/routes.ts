// The graph service's routes under /graph/v1/{tenant}/: resource name, the
// number of segments after it, and per method the handler and scope.
import { MANAGE_SCOPE, VIEW_SCOPE } from '../auth/helpers/bearer'
import * as webhooks from './webhook-routes'
import type { GraphHandler } from './services'
import type { Method } from '../front/route'
import * as consents from './consents'
import { readEvents } from './events'
import * as meta from './metamodel'
import { getNeighbours } from './neighbours'
import * as nodes from './nodes'
import type { GraphParams } from './params'
import * as relations from './relations'
import * as transfer from './tenant-transfer'

export interface GraphMethod extends GraphHandler<GraphParams> {
  scope: string
  /** A user token of the tenant may call it without the scope, for its own subject only. */
  allowSubject?: boolean
}

export interface GraphRoute {
  resource: string
  /** Segments after the resource name; `first` and `last` pin the first and last of them. */
  arity: number
  first?: string
  last?: string
  methods: Partial<Record<Method, GraphMethod>>
}

const view = (spec: GraphHandler<GraphParams>): GraphMethod => ({ ...spec, scope: VIEW_SCOPE })
const manage = (spec: GraphHandler<GraphParams>): GraphMethod => ({ ...spec, scope: MANAGE_SCOPE })
const manageOrSubject = (spec: GraphHandler<GraphParams>): GraphMethod => ({ ...spec, scope: MANAGE_SCOPE, allowSubject: true })

export const GRAPH_ROUTES: readonly GraphRoute[] = [
  { resource: 'nodes', arity: 2, methods: { HEAD: view(nodes.countNodes), GET: view(nodes.listNodes) } },
  { resource: 'nodes', arity: 3, methods: { GET: view(nodes.getNode), PUT: manage(nodes.putNode), DELETE: manage(nodes.deleteNode) } },
  { resource: 'nodes', arity: 4, methods: { GET: view(nodes.getNodeProperty), PUT: manage(nodes.putNodeProperty) } },
  { resource: 'relations', arity: 9, methods: { GET: view(relations.getRelation), PUT: manage(relations.putRelation), DELETE: manage(relations.deleteRelation) } },
  { resource: 'counters', arity: 10, methods: { POST: manage(relations.incrementCounter) } },
  { resource: 'neighbours', arity: 3, methods: { GET: view(getNeighbours) } },
  { resource: 'consents', arity: 0, methods: { POST: manage(consents.createConsent) } },
  { resource: 'consents', arity: 1, methods: { GET: manageOrSubject(consents.getConsent), DELETE: manageOrSubject(consents.revokeConsent) } },
  { resource: 'consents', arity: 2, last: 'grant', methods: { POST: manageOrSubject(consents.grantConsent) } },
  { resource: 'consents', arity: 2, last: 'revokedProperties', methods: { PUT: manageOrSubject(consents.setRevokedProperties) } },
  { resource: 'events', arity: 0, methods: { GET: view(readEvents) } },
  // The WebSocket stream is upgraded before routing (src/graph/ws-stream.ts); a plain GET lands here.
  { resource: 'events', arity: 1, last: 'stream', methods: { GET: view(webhooks.streamWithoutUpgrade) } },
  { resource: 'webhooks', arity: 0, methods: { GET: manage(webhooks.listWebhooks), POST: manage(webhooks.createWebhook) } },
  { resource: 'webhooks', arity: 1, methods: { GET: manage(webhooks.getWebhook), DELETE: manage(webhooks.deleteWebhook) } },
  { resource: 'metamodel', arity: 0, methods: { GET: view(meta.getMetamodel) } },
  { resource: 'metamodel', arity: 3, first: 'nodes', methods: { GET: view(meta.getNodeType) } },
  { resource: 'metamodel', arity: 7, first: 'relations', methods: { GET: view(meta.getRelationType) } },
  { resource: 'export', arity: 0, methods: { GET: manage(transfer.exportTenant) } },
  { resource: 'import', arity: 0, methods: { POST: manage(transfer.importTenant) } },
]

export function findGraphRoute(resource: string, rest: readonly string[]): GraphRoute | undefined {
  return GRAPH_ROUTES.find((r) => r.resource === resource && r.arity === rest.length
    && (r.first === undefined || r.first === rest[0]) && (r.last === undefined || r.last === rest[rest.length - 1]))
}
