// What the service's shard actors did during a measured window, from its
// own /metrics (open by default): group commits and the writes they carried,
// summed over shards. With one tenant that is one shard's commit pipeline:
// commits per second and writes per commit say whether writes wait on the
// disk's flushes or on the actor's work (bench/README.md, "Durable writes").

/** Group commits so far and the writes in them (histogram count and sum of shard_commit_batch_size). */
export interface CommitCounts { commits: number; writes: number }

export function parseCommitCounts(metricsText: string): CommitCounts {
  let commits = 0
  let writes = 0
  for (const line of metricsText.split('\n')) {
    if (line.startsWith('shard_commit_batch_size_count{')) commits += Number(line.slice(line.lastIndexOf(' ') + 1))
    else if (line.startsWith('shard_commit_batch_size_sum{')) writes += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return { commits, writes }
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
}

export function commitPipeline(before: CommitCounts | undefined, after: CommitCounts | undefined, okRps: number, busiestThreadCores: number): CommitPipeline {
  if (before === undefined || after === undefined || after.commits <= before.commits) return { busiestThreadCores }
  const writesPerCommit = (after.writes - before.writes) / (after.commits - before.commits)
  return { busiestThreadCores, writesPerCommit, commitsPerSecond: okRps / writesPerCommit }
}
