// One webhook's live delivery state on the front thread (src/events/webhook-delivery.ts
// drives it). What the hook is doing is one phase, and the persisting of its
// state one more, so that no mix of flags can say two things at once.
import type { WebhookState } from '../contract/messages'
import type { LoggedEvent } from './event-page'

/**
 * idle: may read or POST; reading: a page (or the log's head) is being read;
 * posting: an event is on its way; waiting: a retry or back-off timer runs;
 * suspended: failing for a day, no more attempts (persisted);
 * removed: deleted or delivery closed (final).
 */
export type Phase = 'idle' | 'reading' | 'posting' | 'waiting' | 'suspended' | 'removed'

/**
 * idle: nothing to save; in flight: one save is on its way; in flight, due:
 * and the state changed since, so one more follows; due: one more is owed
 * (the state changed during a save, or the actor restarted and lost it).
 */
export type SaveState = 'idle' | 'in flight' | 'in flight, due' | 'due'

export class Hook implements WebhookState {
  cursor: number
  failingSince: number | null
  lastError: string | null
  phase: Phase
  saving: SaveState = 'idle'
  page: LoggedEvent[] = []
  index = 0
  /** events may exist after the cursor: the log grew since the last read, or the last page was full */
  more = true
  /** consecutive failures since the last success (for the back-off) */
  failures = 0
  timer: NodeJS.Timeout | undefined
  unsubscribe: () => void = () => undefined

  constructor(readonly tenant: string, readonly id: string, readonly url: string, readonly secret: string, state: WebhookState) {
    this.cursor = state.cursor
    this.failingSince = state.failingSince
    this.phase = state.suspended ? 'suspended' : 'idle'
    this.lastError = state.lastError
  }

  get suspended(): boolean {
    return this.phase === 'suspended'
  }

  get removed(): boolean {
    return this.phase === 'removed'
  }

  state(): WebhookState {
    return { cursor: this.cursor, failingSince: this.failingSince, suspended: this.suspended, lastError: this.lastError }
  }

  /** A read, POST or timer ended: back to idle; false when the hook was removed meanwhile. */
  settle(): boolean {
    if (this.phase === 'reading' || this.phase === 'posting' || this.phase === 'waiting') this.phase = 'idle'
    return this.phase !== 'removed'
  }

  /** True when the caller should send a save now; false when one is in flight (one more then follows). */
  beginSave(): boolean {
    if (this.saving === 'in flight' || this.saving === 'in flight, due') {
      this.saving = 'in flight, due'
      return false
    }
    this.saving = this.saving === 'due' ? 'in flight, due' : 'in flight'
    return true
  }

  /** The save in flight came back; `lost` when the actor restarted before it was applied. */
  endSave(lost: boolean): void {
    this.saving = lost || this.saving === 'in flight, due' ? 'due' : 'idle'
  }

  /** Takes the owed save: true when the caller should save now. */
  takeDue(): boolean {
    if (this.saving !== 'due') return false
    this.saving = 'idle'
    return true
  }
}
