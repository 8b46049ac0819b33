// The disk probe writes and syncs where it is told, reports ordered
// percentiles, and leaves nothing behind. No timing assertions.
import t from 'tap'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fsyncLine, probeFsync } from '../../../bench/fsync-probe'

t.test('probes the given directory and cleans up', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fsync-probe-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const r = probeFsync(dir, { maxSyncs: 20, maxMs: 60_000, blockBytes: 512 })
  t.equal(r.syncs, 20)
  t.equal(r.blockBytes, 512)
  t.equal(r.dir, dir)
  t.ok(r.p50 > 0 && r.p50 <= r.p99 && r.p99 <= r.max, `p50 ${r.p50} <= p99 ${r.p99} <= max ${r.max}`)
  t.same(readdirSync(dir), [], 'its scratch file is gone')
  t.match(fsyncLine(r), /512-byte write \+ fdatasync, 20 times .* p50 .* ms, p99 .* ms, max .* ms/)
})

t.test('stops at the time limit when that comes first', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fsync-probe-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const r = probeFsync(dir, { maxSyncs: 1_000_000, maxMs: 1 })
  t.ok(r.syncs >= 1 && r.syncs < 1_000_000)
})
