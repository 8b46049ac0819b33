// Traces on only: the spans of a group commit, in the actor's thread. Each
// traced write of the batch carries its actor call's traceparent
// (src/shards/call-spans.ts); the commit span is that call's child, from the
// batch's start to its answer, and the sync span the commit's child, from
// the batch having run in its transaction to the batch being durable (the
// flush, the journal record synced, or in cluster mode replicated). A
// batch of writes of several requests gives each its own pair, with the
// same times: each trace shows the commit its write shared.
import type { Traces } from '../../src/telemetry/traces'

export class CommitSpans {
  private readonly started = performance.now()
  private ranAt: number | undefined
  private durableAt: number | undefined

  private constructor(private readonly t: Traces, private readonly shard: number, private readonly size: number, private readonly parents: readonly string[]) {}

  /** The spans of a batch, or undefined when none of its writes is traced. */
  static of(t: Traces, shard: number, traces: readonly (string | undefined)[]): CommitSpans | undefined {
    const parents = traces.filter((p): p is string => p !== undefined)
    return parents.length === 0 ? undefined : new CommitSpans(t, shard, traces.length, parents)
  }

  /** The batch ran in its transaction: what follows is the commit's sync. */
  ran(): void {
    this.ranAt = performance.now()
  }

  /** The batch is durable. */
  durable(): void {
    this.durableAt = performance.now()
  }

  /** The batch is answered (`failure`: why it failed). */
  end(failure?: string): void {
    const ended = performance.now()
    const attributes = { 'profile_graph.shard': this.shard, 'profile_graph.batch_size': this.size }
    for (const parent of this.parents) {
      const commit = this.t.start('commit', 'internal', parent, attributes, this.started)
      if (this.ranAt !== undefined) this.t.end(this.t.start('sync', 'internal', commit, { 'profile_graph.shard': this.shard }, this.ranAt), this.durableAt === undefined ? failure : undefined, this.durableAt ?? ended)
      this.t.end(commit, failure, ended)
    }
  }
}
