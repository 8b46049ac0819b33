// When an owner may hand a unit over (docs/design/replication.md, "Shard
// leases"): only once the host it goes to has nearly caught up with the
// stream, so that the last few entries are all it applies while requests wait
// for its claim. Handed to a host far behind, the unit had no owner for the
// rest of that host's catch-up, and requests waiting for it got 503s.
//
// Each standby reports, per unit it follows, the sequence it applied and the
// stream's end as it last saw it (a follow report in the lease bucket). The
// owner judges a report by the bucket's revisions, one count for every key,
// so no clock is compared between hosts: it notes (revision, applied) at its
// claim and at each renewal. A report written before the oldest such note
// still kept (the renewal about a lease period ago, or the claim) is stale:
// its host may be dead, or have been wiped since. The stream held at least
// what the owner had applied at any renewal written before the report, so
// that is a floor under the stream's end the report may have missed (its
// host's tail stalled, or it was paused).
import type { KV } from '@nats-io/kv'
import { withTimeout } from './with-timeout'

/** What a standby reports of a unit it follows: the last sequence it applied, and the stream's end as its tail last saw it. */
export interface FollowReport {
  applied: number
  end: number
}

/** Entries a target may always still lack when the owner hands the unit over. */
export const HAND_OVER_GAP = 100
/**
 * Under load, more: what the owner appended in this long. A standby keeping
 * pace lags by its replication delay times the append rate, so a fixed gap
 * could hold a busy shard back for good; once the owner stops appending the
 * standby applies that many in well under this time, and the requests
 * waiting for the switch wait about this long, far less than the lease
 * period they may.
 */
export const HAND_OVER_CATCH_UP_MS = 500

/** A follow report's JSON, or undefined when it is not one. */
export function parseFollowReport(text: string): FollowReport | undefined {
  try {
    const v = JSON.parse(text) as Partial<FollowReport>
    if (typeof v.applied === 'number' && typeof v.end === 'number') return { applied: v.applied, end: v.end }
  } catch {
    // not JSON: no report
  }
  return undefined
}

interface Note {
  at: number
  revision: number
  applied: number
}

/** The owner's claim and renewals over the last lease period: what follow reports are judged against. */
export class OwnerTrail {
  private notes: Note[] = []

  constructor(private readonly leaseMs: number) {}

  /** At the claim (after `reset`) and at each renewal: its bucket revision, and the sequence applied before it was sent. */
  note(at: number, revision: number, applied: number): void {
    this.notes.push({ at, revision, applied })
    // Kept: the newest note at least a lease period old (or the claim), and every one since.
    while (this.notes.length > 1 && at - this.notes[1]!.at >= this.leaseMs) this.notes.shift()
  }

  reset(): void {
    this.notes = []
  }

  /** How many entries the report's host lacked when it wrote it (at bucket revision `revision`); undefined when the report is stale. */
  lag(report: FollowReport, revision: number): number | undefined {
    const oldest = this.notes[0]
    if (oldest === undefined || revision <= oldest.revision) return undefined
    let end = report.end
    for (const n of this.notes) if (n.revision < revision) end = Math.max(end, n.applied)
    return Math.max(0, end - report.applied)
  }

  /** Entries a target may lack now: HAND_OVER_GAP, or what the owner appended in HAND_OVER_CATCH_UP_MS at its rate since the oldest note kept. */
  allowedLag(): number {
    const first = this.notes[0]
    const last = this.notes[this.notes.length - 1]
    if (first === undefined || last === undefined || last.at <= first.at) return HAND_OVER_GAP
    return Math.max(HAND_OVER_GAP, Math.floor(((last.applied - first.applied) / (last.at - first.at)) * HAND_OVER_CATCH_UP_MS))
  }

  /** Whether the unit may go to the report's host now. */
  caughtUp(report: FollowReport, revision: number): boolean {
    const lag = this.lag(report, revision)
    return lag !== undefined && lag <= this.allowedLag()
  }
}

/** Writes this host's follow reports (key, report), each bounded by `timeoutMs`: rewritten every presence beat, since a report is judged by how recent its revision is. */
export async function writeFollowReports(kv: Pick<KV, 'put'>, reports: Iterable<readonly [string, FollowReport]>, timeoutMs: number): Promise<void> {
  await Promise.all([...reports].map(([key, report]) => withTimeout(kv.put(key, JSON.stringify(report)), timeoutMs, 'writing a follow report')))
}
