// Scheduled and decay events (spec 4 and 6). A write with the scheduling
// headers records a STORE event and a schedule; at its time the schedule
// fires a SCHEDULED (or DECAY) event. Schedules are keyed by due time, so
// firing is a range read from the start; a later schedule with the same
// scheduleId replaces the earlier one. They live in LMDB, so a schedule due
// while the server was down fires right after the start.
import { dueBy, scheduleIdKey, scheduleKey, scheduleOf } from './keys'
import { appendEvent } from './events'
import type { ScheduleEntry } from './schema'
import type { ShardStore } from './shard-store'

export function putSchedule(store: ShardStore, tenant: string, scheduleId: string, dueAt: number, entry: ScheduleEntry): void {
  const previous = store.scheduleIds.get(scheduleIdKey(tenant, scheduleId))
  if (previous !== undefined) store.schedules.removeSync(scheduleKey(previous, tenant, scheduleId))
  store.schedules.putSync(scheduleKey(dueAt, tenant, scheduleId), entry)
  store.scheduleIds.putSync(scheduleIdKey(tenant, scheduleId), dueAt)
}

/** The due time of the earliest schedule, if any. */
export function nextDue(store: ShardStore): number | undefined {
  for (const key of store.schedules.getKeys({ limit: 1 })) return scheduleOf(key).dueAt
  return undefined
}

/** Emits every schedule due at `now` (inside a write transaction); returns the tenants that got events. */
export function fireDue(store: ShardStore, now: number, limit = 1000): Set<string> {
  const tenants = new Set<string>()
  const due = [...store.schedules.getRange({ end: dueBy(now), limit })]
  for (const { key, value } of due) {
    const { tenant, scheduleId } = scheduleOf(key)
    appendEvent(store, tenant, value.operation, value.schema, value.payload, undefined, now)
    store.schedules.removeSync(key)
    store.scheduleIds.removeSync(scheduleIdKey(tenant, scheduleId))
    tenants.add(tenant)
  }
  return tenants
}
