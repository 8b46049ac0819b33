// A power loss, stood in for after a kill -9 (which alone cannot show one:
// the page cache survives it): each journal file is cut back to the length
// its last completed fdatasync covered (JOURNAL_SYNC_TRACE), and each page
// of each shard's data.mdb, meta pages included, is at random either what
// the kill left or what a copy made right after the last checkpoint's LMDB
// sync holds (JOURNAL_TEST_SNAPSHOTS), the file's length either one: LMDB
// commits without syncing between checkpoints, and the disk may have
// written any of those pages, in any order. After the restart every
// acknowledged write is there, every counter holds at least its last
// acknowledged value and no more than was asked, over rounds cut at random
// moments.
import t from 'tap'
import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { Graph, createConsent } from '../helpers/client'
import { getToken, removeDir, startServer, tempDir, type Server } from '../helpers/server'
import { until } from '../../bench/wait'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

type Body = Record<string, unknown>
const ROUNDS = 4
const SHARDS = 4
/** LMDB's page size on this platform (lmdb-js's default). */
const PAGE = 4096

/** What fdatasync had covered of each journal file when the process died. */
function syncedLengths(trace: string): Map<string, number> {
  const synced = new Map<string, number>()
  if (!existsSync(trace)) return synced
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const at = line.lastIndexOf(' ')
    if (at < 0) continue
    const path = line.slice(0, at)
    synced.set(path, Math.max(synced.get(path) ?? 0, Number(line.slice(at + 1))))
  }
  return synced
}

/**
 * data.mdb as a power loss may leave it, in place (the same file): each
 * page from the kill's file or the checkpoint's copy, at random; the
 * length of either. Returns how many pages came from the copy.
 */
function mixPages(dir: string): number {
  const file = join(dir, 'data.mdb')
  const now = readFileSync(file)
  // Every shard had a checkpoint at its start, so there is always a copy.
  const synced = readFileSync(join(dir, 'data.mdb.at-checkpoint'))
  const length = Math.random() < 0.5 ? now.length : synced.length
  const mixed = Buffer.alloc(length)
  let fromCopy = 0
  for (let at = 0; at < length; at += PAGE) {
    const copy = at < synced.length && (at >= now.length || Math.random() < 0.5)
    if (copy) fromCopy++
    ;(copy ? synced : now).copy(mixed, at, at, Math.min(at + PAGE, length))
  }
  const fd = openSync(file, 'r+')
  try {
    writeSync(fd, mixed, 0, length, 0)
    ftruncateSync(fd, length)
  } finally {
    closeSync(fd)
  }
  return fromCopy
}

/** Drops what a power loss would: unsynced journal bytes, and data.mdb pages written since the last checkpoint. */
function losePower(dataDir: string, trace: string): { cut: number; pages: number } {
  const synced = syncedLengths(trace)
  let cut = 0
  let pages = 0
  for (let shard = 0; shard < SHARDS; shard++) {
    const dir = join(dataDir, 'shards', String(shard))
    pages += mixPages(dir)
    rmSync(join(dir, 'lock.mdb'), { force: true })
    const journal = join(dir, 'journal')
    for (const name of existsSync(journal) ? readdirSync(journal) : []) {
      const path = join(journal, name)
      const keep = synced.get(path) ?? 0
      const size = statSync(path).size
      if (size > keep) {
        truncateSync(path, keep)
        cut += size - keep
      }
    }
  }
  rmSync(trace, { force: true })
  return { cut, pages }
}

t.test('every acknowledged write survives a power loss at a random moment', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const trace = join(dir, 'sync-trace')
  const env = { JOURNAL_SYNC_TRACE: trace, JOURNAL_TEST_SNAPSHOTS: '1', JOURNAL_CHECKPOINT_MS: '400', JOURNAL_CHECKPOINT_BYTES: String(64 * 1024) }
  const acked = new Map<string, number>()
  let ackedViews = 0
  let askedViews = 0
  let server: Server | undefined
  t.teardown(async () => { await server?.kill() })
  let consent: string | undefined
  for (let round = 0; round < ROUNDS; round++) {
    server = await startServer({ dataDir: dir, env })
    const token = await getToken(server.url)
    consent ??= await createConsent(server.url, 'demo', token, 'power-subject')
    const g = new Graph(server.url, 'demo', token, consent)
    // What the last round acknowledged is all here after the power loss.
    for (const [id, i] of acked) {
      const res = await g.get(`nodes/core/customer/${id}`)
      if (res.status !== 200 || res.json<Body>().i !== i) {
        t.fail(`round ${round}: ${id} (i ${i}) answered ${res.status} ${res.text.slice(0, 120)}`)
        return
      }
    }
    if (round > 0) t.pass(`round ${round}: all ${acked.size} acknowledged nodes read back`)
    if (round > 0) {
      const views = (await g.get('relations/core/customer/p0/core/product/p/core/viewed/r')).json<{ views?: number }>().views ?? 0
      t.ok(views >= ackedViews && views <= askedViews, `round ${round}: counter ${views} within [${ackedViews}, ${askedViews}]`)
      ackedViews = views
      askedViews = views
    }
    if (round === ROUNDS - 1) break
    let stop = false
    let seq = 0
    const writer = async (): Promise<void> => {
      while (!stop) {
        const id = `r${round}-${seq++}`
        const i = seq
        try {
          const res = await g.put(`nodes/core/customer/${id}`, { name: id, i })
          if (res.status === 204) acked.set(id, i)
          askedViews++
          const c = await g.post('counters/core/customer/p0/core/product/p/core/viewed/r/views')
          if (c.status === 200) ackedViews = Math.max(ackedViews, c.json<Body>().views as number)
        } catch {
          return
        }
      }
    }
    const before = acked.size
    const writers = Array.from({ length: 8 }, writer)
    // A random moment after enough writes that checkpoints have come and gone.
    const target = before + 40 + Math.floor(Math.random() * 300)
    await until(`${target} acknowledged writes`, () => acked.size >= target, 120_000)
    await server.kill()
    stop = true
    await Promise.all(writers)
    const { cut, pages } = losePower(join(dir, 'data'), trace)
    t.comment(`round ${round}: ${acked.size - before} writes acknowledged, ${cut} unsynced journal bytes dropped, ${pages} data.mdb pages from the checkpoint's copy`)
  }
  t.ok(acked.size > 100, `${acked.size} acknowledged writes checked`)
})
