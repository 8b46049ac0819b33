// What the service's shard actors did during a measured window, from its
// own /metrics (open by default): group commits and the writes they carried,
// summed over shards. With one tenant that is one shard's commit pipeline:
// commits per second and writes per commit say whether writes wait on the
// disk's flushes or on the actor's work (bench/MEASUREMENTS.md, "Durable
// writes: the commit pipeline and the actor's cost per write", 2026-11-25).

/**
 * Group commits so far and the writes in them (histogram count and sum of
 * shard_commit_batch_size), and the syncs so far: the shard journals'
 * fdatasyncs and LMDB's own (checkpoints).
 */
export interface CommitCounts { commits: number; writes: number; journalSyncs: number; lmdbSyncs: number }

const SUMMED: Record<string, keyof CommitCounts> = {
  'shard_commit_batch_size_count{': 'commits',
  'shard_commit_batch_size_sum{': 'writes',
  'shard_journal_syncs_total{': 'journalSyncs',
  'shard_lmdb_syncs_total{': 'lmdbSyncs',
}

export function parseCommitCounts(metricsText: string): CommitCounts {
  const out: CommitCounts = { commits: 0, writes: 0, journalSyncs: 0, lmdbSyncs: 0 }
  for (const line of metricsText.split('\n')) {
    const brace = line.indexOf('{')
    const field = brace < 0 ? undefined : SUMMED[line.slice(0, brace + 1)]
    if (field !== undefined) out[field] += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return out
}

/** Undefined when the service does not answer /metrics (metrics off or behind a token). */
export async function scrapeCommitCounts(origin: string): Promise<CommitCounts | undefined> {
  try {
    const res = await fetch(`${origin}/metrics`)
    if (!res.ok) return undefined
    return parseCommitCounts(await res.text())
  } catch {
    return undefined
  }
}

export interface CommitPipeline {
  /** CPU of the service's busiest thread other than the front thread, in cores: with one tenant, its shard's actor. */
  busiestThreadCores: number
  /** Writes per group commit in the window; undefined without /metrics or without commits. */
  writesPerCommit?: number
  /** The window's answered requests per second over writesPerCommit (the actors report once a second, so counting their commits over a 3 s window would be off by up to a third). */
  commitsPerSecond?: number
  /** Journal fdatasyncs and LMDB syncs per second, likewise from the answered rate: syncs per write in the reports times writes per second. */
  journalSyncsPerSecond?: number
  lmdbSyncsPerSecond?: number
  /** Per answered request: bytes the service passed to write calls, and bytes written to the data directory's block device (by anything on the machine). */
  writtenBytesPerRequest?: number
  deviceBytesPerRequest?: number
}

export interface BytesPerRequest { writtenBytesPerRequest?: number; deviceBytesPerRequest?: number }

export function commitPipeline(before: CommitCounts | undefined, after: CommitCounts | undefined, okRps: number, busiestThreadCores: number, disk: BytesPerRequest = {}): CommitPipeline {
  if (before === undefined || after === undefined || after.commits <= before.commits) return { busiestThreadCores, ...disk }
  const writes = after.writes - before.writes
  const writesPerCommit = writes / (after.commits - before.commits)
  const perSecond = (n: number): number => okRps * n / writes
  return {
    busiestThreadCores, writesPerCommit, commitsPerSecond: okRps / writesPerCommit,
    journalSyncsPerSecond: perSecond(after.journalSyncs - before.journalSyncs), lmdbSyncsPerSecond: perSecond(after.lmdbSyncs - before.lmdbSyncs), ...disk,
  }
}
