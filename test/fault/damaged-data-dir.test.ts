// A damaged or mismatched data directory is refused at start with one line
// that says what is wrong and what to do; it is never served as empty or
// locked data, and nothing in it is rewritten.
import t, { type Test } from 'tap'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, truncateSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Graph, createConsent } from '../helpers/client'
import { FORMAT_VERSION } from '../../src/shards/manifest'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'
import { encodeRecord } from '../../workers/journal/record'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

/** Rewrites fields of the manifest, as an operator's edit would. */
function editManifest(root: string, fields: Record<string, unknown>): void {
  const p = join(root, 'data', 'manifest.json')
  writeFileSync(p, JSON.stringify({ ...JSON.parse(readFileSync(p, 'utf8')) as object, ...fields }))
}

const shardsOf = (root: string): string[] => readdirSync(join(root, 'data', 'shards')).map((s) => join(root, 'data', 'shards', s))

/** A data directory with consents and nodes on every shard, made once and copied per case. */
async function template(): Promise<string> {
  const dir = tempDir('damage-template-')
  const server = await startServer({ dataDir: dir, args: ['--shards', '2'] })
  try {
    const token = await getToken(server.url)
    for (let i = 0; i < 4; i++) {
      const g = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, `s${i}`))
      if ((await g.put(`nodes/core/customer/c${i}`, { name: `c${i}` })).status !== 204) throw new Error('write failed')
    }
  } finally {
    await server.stop()
  }
  return dir
}

/** The start's error, or undefined when it started (then it is stopped again). */
async function startError(dir: string): Promise<string | undefined> {
  try {
    const s = await startServer({ dataDir: dir })
    await s.stop()
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

/** The one `error:` line of a refused start, and no stack trace. */
function refusal(t: Test, message: string | undefined, pattern: RegExp): void {
  t.ok(message !== undefined, 'the start is refused')
  const lines = (message ?? '').split('\n').filter((l) => l.startsWith('error: '))
  t.equal(lines.length, 1, 'one error line')
  t.match(lines[0] ?? '', pattern)
  t.notMatch(message ?? '', /^\s+at /m, 'no stack trace')
}

t.test('damaged data directories are refused with a message', async (t) => {
  const base = await template()
  t.teardown(() => removeDir(base))
  const shard = (root: string): string => shardsOf(root).find((s) => statSync(join(s, 'keys.bin')).size > 0)!

  const cases: [string, (root: string) => void, RegExp][] = [
    ['keys.bin deleted', (r) => rmSync(join(shard(r), 'keys.bin')), /keys\.bin is missing or truncated/],
    ['keys.bin truncated', (r) => truncateSync(join(shard(r), 'keys.bin'), 64), /keys\.bin is missing or truncated/],
    ['keys.bin zeroed', (r) => { const p = join(shard(r), 'keys.bin'); writeFileSync(p, Buffer.alloc(statSync(p).size)) }, /granted consent .* destroyed or does not open/],
    ['data.mdb emptied', (r) => truncateSync(join(shardsOf(r)[0]!, 'data.mdb'), 0), /data\.mdb is empty/],
    ['data.mdb half-truncated', (r) => { const p = join(shardsOf(r)[0]!, 'data.mdb'); truncateSync(p, Math.floor(statSync(p).size / 2)) }, /data\.mdb is truncated/],
    ['data.mdb deleted', (r) => rmSync(join(shardsOf(r)[0]!, 'data.mdb')), /data\.mdb is missing/],
    ['a journal record damaged before the last one', (r) => {
      // A clean stop leaves the journal empty: a segment of three records, the first with a flipped byte.
      const bytes = Buffer.concat([1, 2, 3].map((n) => encodeRecord(1_000_000 + n, Buffer.from(`record ${n}`))))
      bytes[20] = bytes[20]! ^ 0xff
      writeFileSync(join(shardsOf(r)[0]!, 'journal', '0000000001000001.log'), bytes)
    }, /shard \d+: journal segment .* is damaged at byte 0; restore this shard from a backup/],
    ['a directory in place of data.mdb', (r) => { const p = join(shardsOf(r)[0]!, 'data.mdb'); rmSync(p); mkdirSync(p) }, /data\.mdb is not a regular file/],
    ['garbage over the meta pages', (r) => { const p = join(shardsOf(r)[0]!, 'data.mdb'); const b = readFileSync(p); b.fill(0x41, 0, 8192); writeFileSync(p, b) }, /does not start with an LMDB meta page/],
    ['garbage over the data pages of a shard', (r) => {
      const p = join(shard(r), 'data.mdb')
      const b = readFileSync(p)
      b.fill(0x41, 8192)
      writeFileSync(p, b)
    }, /data\.mdb is damaged: /],
    ['garbage over the data pages of the auth store', (r) => {
      const p = join(r, 'data', 'auth', 'data.mdb')
      const b = readFileSync(p)
      b.fill(0x41, 8192)
      writeFileSync(p, b)
    }, /auth\/data\.mdb is damaged: /],
    ['manifest.json deleted', (r) => rmSync(join(r, 'data', 'manifest.json')), /holds data .* but no manifest\.json/],
    ['manifest.json garbage', (r) => writeFileSync(join(r, 'data', 'manifest.json'), '{"format":'), /manifest .* is unreadable/],
    ['fewer shards in the manifest', (r) => editManifest(r, { shards: 1 }), /manifest\.json says "shards": 1, but the directory holds shards\/0 to shards\/1 \(2 shards\); .*set "shards" back to 2/],
    ['more shards in the manifest', (r) => editManifest(r, { shards: 4 }), /manifest\.json says "shards": 4, but the directory holds shards\/0 to shards\/1 \(2 shards\)/],
    ['a shard directory removed', (r) => rmSync(join(r, 'data', 'shards', '0'), { recursive: true }), /manifest\.json says "shards": 2, but the directory holds shards\/1; .*restore the directory from a backup/],
    ['a newer disk format', (r) => editManifest(r, { formatVersion: 99 }), /disk format 99, written by a newer version/],
    ['master key file missing', (r) => rmSync(join(r, 'secrets', 'master.key')), /master key file .* is missing/],
    ['another master key', (r) => writeFileSync(join(r, 'secrets', 'master.key'), Buffer.alloc(32, 7).toString('base64') + '\n', { mode: 0o600 }), /master key does not belong/],
  ]
  for (const [name, damage, pattern] of cases) {
    await t.test(name, async (t) => {
      const dir = tempDir('damaged-')
      t.teardown(() => removeDir(dir))
      cpSync(base, dir, { recursive: true })
      damage(dir)
      refusal(t, await startError(dir), pattern)
      if (name === 'master key file missing') t.notOk(existsSync(join(dir, 'secrets', 'master.key')), 'no new key was written')
    })
  }
})

t.test('a format-1 directory (no formatVersion) is migrated and its data served', async (t) => {
  const dir = await template()
  t.teardown(() => removeDir(dir))
  const p = join(dir, 'data', 'manifest.json')
  const { formatVersion: _drop, ...v1 } = JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>
  writeFileSync(p, JSON.stringify({ ...v1, format: 1 }))
  const server = await startServer({ dataDir: dir })
  t.teardown(() => server.stop())
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token)
  t.equal((await g.get('nodes/core/customer/c1')).status, 200)
  const migrated = JSON.parse(readFileSync(p, 'utf8')) as { format: number; formatVersion: number }
  t.equal(migrated.formatVersion, FORMAT_VERSION, 'the manifest records the current format')
  t.equal(migrated.format, FORMAT_VERSION, 'and `format` too, which builds before formatVersion refuse')
})
