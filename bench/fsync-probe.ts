// The disk's own durable-write latency: write a small block into a file on the
// filesystem of the data directory and fdatasync it, many times, as a commit of
// a few pages does. Its p99 is the floor under the p99 of any durable write,
// so the open-loop goal is judged against it (latency-goal.ts).
//
// `node dist/bench/fsync-probe.js [DIR]` runs it alone (DIR: default the temp dir).
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Histogram } from './histogram'

export interface FsyncProbeResult {
  dir: string
  blockBytes: number
  syncs: number
  seconds: number
  /** Milliseconds. */
  p50: number
  p99: number
  max: number
}

export interface FsyncProbeOptions {
  blockBytes?: number
  /** Stops after this many syncs... */
  maxSyncs?: number
  /** ...or after this long, whichever comes first. */
  maxMs?: number
}

/** Blocks the rewritten file holds: writes go in place, as LMDB's pages do, so no sync also has to grow the file. */
const FILE_BLOCKS = 256

export function probeFsync(dir: string, o: FsyncProbeOptions = {}): FsyncProbeResult {
  const blockBytes = o.blockBytes ?? 4096
  const maxSyncs = o.maxSyncs ?? 2000
  const maxMs = o.maxMs ?? 3000
  const work = mkdtempSync(join(dir, 'fsync-probe-'))
  const fd = openSync(join(work, 'probe'), 'w')
  const block = Buffer.alloc(blockBytes, 0x5a)
  const hist = new Histogram()
  try {
    for (let i = 0; i < FILE_BLOCKS; i++) writeSync(fd, block, 0, blockBytes, i * blockBytes)
    fdatasyncSync(fd)
    const t0 = performance.now()
    let syncs = 0
    while (syncs < maxSyncs && performance.now() - t0 < maxMs) {
      block.writeUInt32LE(syncs, 0)
      const start = performance.now()
      writeSync(fd, block, 0, blockBytes, (syncs % FILE_BLOCKS) * blockBytes)
      fdatasyncSync(fd)
      hist.record((performance.now() - start) * 1000)
      syncs++
    }
    const s = hist.summary()
    return { dir, blockBytes, syncs, seconds: (performance.now() - t0) / 1000, p50: s.p50, p99: s.p99, max: s.max }
  } finally {
    closeSync(fd)
    rmSync(work, { recursive: true, force: true })
  }
}

export function fsyncLine(r: FsyncProbeResult): string {
  return `disk fsync probe (${r.blockBytes}-byte write + fdatasync, ${r.syncs} times in ${r.seconds.toFixed(1)} s, in ${r.dir}): `
    + `p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms`
}

if (require.main === module) {
  console.log(fsyncLine(probeFsync(process.argv[2] ?? tmpdir())))
}
