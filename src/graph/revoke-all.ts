// Many revocations as one answer (DELETE subject, src/graph/subject.ts):
// each goes through the single revocation, a bounded number at a time.
import type { ActorReply } from '../contract/messages'

/** Revocations in flight at once: enough to fill a group commit, few enough never to fill an actor's queue. */
export const REVOKE_WAVE = 64

const DONE: ActorReply = { kind: 'ok', id: 0, status: 204, body: undefined, total: undefined }

/**
 * Revokes each reference with `revoke`, REVOKE_WAVE at a time, and calls
 * `done` once: with 204 when every one succeeded, or with the first failure
 * once every call in flight has answered (no new one starts after it).
 */
export function revokeAll(refs: readonly string[], revoke: (ref: string, revoked: (r: ActorReply) => void) => void, done: (r: ActorReply) => void): void {
  let next = 0
  let running = 0
  let failed: ActorReply | undefined
  let answered = false
  const launch = (): void => {
    while (running < REVOKE_WAVE && next < refs.length && failed === undefined) {
      running++
      revoke(refs[next++]!, (r) => {
        running--
        if (r.kind === 'error' && failed === undefined) failed = r
        launch()
      })
    }
    // A call may answer at once (a full queue's 503), inside this loop: `answered` keeps the answer single.
    if (running > 0 || (next < refs.length && failed === undefined) || answered) return
    answered = true
    done(failed ?? DONE)
  }
  launch()
}
