// Which calls may run on any actor thread, and which one takes them. Every
// actor opens every shard for reading (docs/design/architecture.md, "Reads on every
// core"); only the owning actor writes a shard.
import type { Operation } from '../contract/messages'

/** Operations answered from a read transaction alone, on whichever actor is least busy. */
const READ_ANYWHERE: ReadonlySet<Operation['op']> = new Set<Operation['op']>([
  'getNode', 'getNodeProperty', 'countNodes', 'getRelation', 'readEvents', 'eventHead', 'listNodes', 'neighbours',
])

export function readsAnywhere(op: Operation): boolean {
  return READ_ANYWHERE.has(op.op)
}

/**
 * The consent a write changes in a way reading threads may have cached
 * (revoke, grant again, revoke properties); such a write is answered only
 * once every thread has dropped what it holds of that consent.
 */
export function consentChanged(op: Operation): { tenant: string; ref: string } | undefined {
  if (op.op === 'revokeConsent' || op.op === 'grantConsent' || op.op === 'setRevokedProperties') return { tenant: op.tenant, ref: op.ref }
  return undefined
}

/**
 * The index of the smallest load; ties go to the first one found from
 * `start` on (the caller rotates `start`, so equal actors take turns). An
 * actor that cannot take the call has load Infinity; at least one must not.
 */
export function leastLoaded(loads: readonly number[], start: number): number {
  let best = -1
  for (let n = 0; n < loads.length; n++) {
    const i = (start + n) % loads.length
    if (best < 0 || loads[i]! < loads[best]!) best = i
  }
  return best
}
