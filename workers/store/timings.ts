// The STORE events and schedules of the scheduling and decay headers (spec
// 4 and 6). Shapes of `schema` and `scheduleId` follow the spec's table for
// the four subjects: node, node property, relation, relation property.
import type { NodeRef, RelationRef, Timing, WriteContext } from '../../src/contract/messages'
import { appendEvent } from './events'
import { putSchedule } from './schedules'
import type { ShardContext } from './context'

export type Subject =
  | { kind: 'node'; node: NodeRef; property?: string }
  | { kind: 'relation'; relation: RelationRef; property?: string }

const SCHEDULED_SCHEMA = 'core/ScheduledEvent'
/** Our design (the spec leaves decay open): the same shapes, schema core/DecayEvent, operation DECAY. */
const DECAY_SCHEMA = 'core/DecayEvent'

function shapes(s: Subject): { schema: string; scheduleId: string; ids: Record<string, string> } {
  if (s.kind === 'node') {
    const { ns, type, id } = s.node
    const base = `nodes/${ns}/${type}`
    return s.property === undefined
      ? { schema: base, scheduleId: `${base}/${id}`, ids: { id } }
      : { schema: `${base}/${s.property}`, scheduleId: `${base}/${s.property}/${id}`, ids: { id } }
  }
  const { from, to, rel } = s.relation
  const schema = `relations/${from.ns}/${from.type}/${to.ns}/${to.type}/${rel.ns}/${rel.type}`
  const idBase = `relations/${from.ns}/${from.type}/${from.id}/${to.ns}/${to.type}/${to.id}/${rel.ns}/${rel.type}`
  return s.property === undefined
    ? { schema, scheduleId: `${idBase}/${rel.id}`, ids: { fromId: from.id, toId: to.id, relationshipId: rel.id } }
    : { schema: `${schema}/${s.property}`, scheduleId: `${idBase}/${s.property}/${rel.id}`, ids: { fromId: from.id, toId: to.id, relationshipId: rel.id } }
}

/** The payload of the event fired at the scheduled time (spec 6): relations say `id`, not `relationshipId`. */
function firedIds(s: Subject, ids: Record<string, string>): Record<string, string> {
  return s.kind === 'node' ? { id: ids.id! } : { fromId: ids.fromId!, toId: ids.toId!, id: ids.relationshipId! }
}

function record(sc: ShardContext, tenant: string, s: Subject, owner: string, t: Timing, decay: boolean, trace: string | undefined): void {
  const { schema, scheduleId, ids } = shapes(s)
  const at = new Date(t.at).toISOString()
  const parameter = t.parameter ?? null
  const storePayload = decay
    ? { ...ids, schema, consentRefId: owner, decayAt: at, decayParameters: parameter, scheduleId: `decay/${scheduleId}` }
    : { ...ids, schema, consentRefId: owner, scheduleAt: at, scheduleParameter: parameter, scheduleId }
  appendEvent(sc.store, tenant, 'STORE', decay ? DECAY_SCHEMA : SCHEDULED_SCHEMA, storePayload, trace, sc.now)
  const fired = decay
    ? { ...firedIds(s, ids), consentRefId: owner, decayParameters: parameter }
    : { ...firedIds(s, ids), consentRefId: owner, scheduleParameter: parameter }
  putSchedule(sc.store, tenant, storePayload.scheduleId, t.at, { operation: decay ? 'DECAY' : 'SCHEDULED', schema, payload: fired })
  sc.schedulesChanged = true
}

/** After a successful write: the STORE events and schedules its headers ask for. */
export function recordTimings(sc: ShardContext, tenant: string, subject: Subject, owner: string, ctx: WriteContext): void {
  if (ctx.schedule !== undefined) record(sc, tenant, subject, owner, ctx.schedule, false, ctx.trace)
  if (ctx.decay !== undefined) record(sc, tenant, subject, owner, ctx.decay, true, ctx.trace)
}
