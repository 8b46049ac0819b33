// The bench's view of a service's commit pipeline: group commits and their
// writes summed over shards from the metrics text, and the window's figures
// derived from two scrapes; the pipeline probe runs a real group commit.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { busiestOtherThreadCores, readDeviceWrittenBytes, readWrittenBytes } from '../../../bench/proc'
import { commitPipeline, parseCommitCounts } from '../../../bench/commit-stats'
import { runPipeline } from '../../../bench/commit-pipeline'

const METRICS = `# HELP shard_commit_batch_size Writes per group commit, by shard
# TYPE shard_commit_batch_size histogram
shard_commit_batch_size_bucket{le="1",shard="0"} 3
shard_commit_batch_size_sum{shard="0"} 40
shard_commit_batch_size_count{shard="0"} 4
shard_commit_batch_size_sum{shard="5"} 10
shard_commit_batch_size_count{shard="5"} 1
shard_commit_seconds_count{shard="0"} 4
shard_journal_syncs_total{shard="0"} 3
shard_journal_syncs_total{shard="5"} 1
shard_lmdb_syncs_total{shard="0"} 2
shard_journal_bytes_total{shard="0"} 999
`

t.test('group commits and their writes are summed over shards', async (t) => {
  t.same(parseCommitCounts(METRICS), { commits: 5, writes: 50, journalSyncs: 4, lmdbSyncs: 2 })
  t.same(parseCommitCounts('process_cpu_seconds_total 1\n'), { commits: 0, writes: 0, journalSyncs: 0, lmdbSyncs: 0 })
})

t.test("a window's writes per commit come from the scrapes' difference, commits per second from the answered rate", async (t) => {
  const at = (commits: number, writes: number, journalSyncs = 0, lmdbSyncs = 0) => ({ commits, writes, journalSyncs, lmdbSyncs })
  t.same(commitPipeline(at(5, 50, 5, 1), at(105, 2050, 85, 3), 4000, 0.5), {
    busiestThreadCores: 0.5, writesPerCommit: 20, commitsPerSecond: 200, journalSyncsPerSecond: 160, lmdbSyncsPerSecond: 4,
  }, 'syncs per second: syncs per write in the reports times the answered rate')
  t.same(commitPipeline(at(5, 50), at(105, 2050), 4000, 0.5, { writtenBytesPerRequest: 1234.5 }).writtenBytesPerRequest, 1234.5, 'bytes per request passed through')
  t.same(commitPipeline(undefined, at(1, 1), 100, 0.2), { busiestThreadCores: 0.2 }, 'no metrics: no figures')
  t.same(commitPipeline(at(5, 50), at(5, 50), 100, 0.2, { deviceBytesPerRequest: 10 }), { busiestThreadCores: 0.2, deviceBytesPerRequest: 10 }, 'no commit in the window: only the bytes')
})

t.test('the busiest thread other than the main one, in cores', async (t) => {
  const before = new Map([[10, 5], [11, 1], [12, 2]])
  const after = new Map([[10, 9], [11, 2.5], [12, 2.5], [13, 0.2]])
  t.equal(busiestOtherThreadCores(10, before, after, 2), 0.75)
})

t.test("a process's written bytes (/proc/<pid>/io) and a directory's device's (/sys/dev/block)", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-written-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const before = readWrittenBytes(process.pid)
  writeFileSync(join(dir, 'f'), Buffer.alloc(100_000))
  const after = readWrittenBytes(process.pid)
  if (before !== undefined && after !== undefined) t.ok(after - before >= 100_000, `this process wrote ${after - before} bytes`)
  t.equal(readWrittenBytes(2 ** 22 + 1), undefined, 'no such process')
  const device = readDeviceWrittenBytes(dir)
  t.ok(device === undefined || (Number.isInteger(device) && device >= 0), `the device of ${dir}: ${device} bytes written so far`)
  t.equal(readDeviceWrittenBytes(join(dir, 'absent')), undefined, 'no such directory')
})

t.test('the pipeline probe answers every write of a real group commit', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'commit-pipeline-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const r = await runPipeline({ op: 'counter', clients: 8, seconds: 0.5, dir, jitterMs: 1, searchable: false, ids: 1000 })
  t.ok(r.writesPerSecond > 0 && r.commitsPerSecond > 0, `${r.writesPerSecond} writes/s in ${r.commitsPerSecond} commits/s`)
  // A window's writes and commits are counted at its edges, so a commit straddling each edge can lift the
  // average by up to its writes (8) over the window's commits: the bound is 8 plus that edge effect.
  const commits = Math.max(1, r.commitsPerSecond * r.seconds)
  t.ok(r.writesPerCommit >= 1 && r.writesPerCommit <= 8 + 16 / commits, `at most one write per client in a commit (${r.writesPerCommit}, ${Math.round(commits)} commits)`)
})
