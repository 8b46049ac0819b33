// A full disk: writes answer 507 with Retry-After and apply nothing, reads
// and every other endpoint keep answering, the actors are not restarted, once
// space is free the next writes succeed without a restart. Two ways to fill
// it: a file that takes every free byte (LMDB's write then fails with
// ENOSPC), and data.mdb growing until it fills the disk (a short write: EIO).
// Needs root for a small tmpfs (CI runs as root); skipped otherwise.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { openSync, closeSync, writeSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Graph, call, createConsent, type Answer } from '../helpers/client'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'
import { sleep } from '../../bench/wait'

function mountTmpfs(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Writes zeros until the file system says it is full. */
function fill(path: string): void {
  const fd = openSync(path, 'w')
  const chunk = Buffer.alloc(1 << 20)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
  } finally {
    closeSync(fd)
  }
}

/** A tmpfs of `size` on a new directory, unmounted and removed at the end of the test. */
function tmpfsFor(t: Test, size: string): string {
  const dir = tempDir('disk-full-')
  if (!mountTmpfs(dir, size)) throw new Error('mount failed')
  t.teardown(() => {
    try { execFileSync('umount', ['-l', dir]) } catch { /* already gone */ }
    removeDir(dir)
  })
  return dir
}

/** A refused write: 507 insufficient_storage with a Retry-After. */
function refused(t: Test, res: Answer, what: string): void {
  t.equal(res.status, 507, `${what}: ${res.text.slice(0, 120)}`)
  t.equal(res.json<{ type: string }>().type, 'insufficient_storage')
  t.match(res.headers['retry-after'], /^[1-9][0-9]*$/, `${what}: Retry-After`)
}

const tokenForm = (url: string): Promise<Answer> => call('POST', `${url}/oauth2/v1/token`, { authorization: `Basic ${Buffer.from('demo-enricher:demo-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials')

const probe = tempDir('disk-full-probe-')
const canMount = mountTmpfs(probe, '1m')
if (canMount) execFileSync('umount', [probe])
removeDir(probe)

t.test('a full disk answers 507 and recovers without a restart', { skip: canMount ? false : 'mounting a tmpfs needs root' }, async (t) => {
  const dir = tmpfsFor(t, '40m')
  const server = await startServer({ dataDir: dir })
  t.teardown(() => server.stop())
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'full'))
  t.equal((await g.put('nodes/core/customer/before', { name: 'before' })).status, 204)

  const filler = join(dir, 'filler')
  fill(filler)
  const big = 'x'.repeat(20_000)
  for (let i = 0; i < 5; i++) {
    refused(t, await g.put(`nodes/core/customer/full-${i}`, { name: big }), `write ${i} on a full disk`)
  }
  const traced = await g.put('nodes/core/customer/full-traced', { name: big }, { 'platform-context-trace-id': 'trace-full-disk' })
  t.equal(traced.status, 507)
  const ready = await call('GET', `${server.url}/health/ready`)
  t.equal(ready.status, 503, 'not ready on a full disk')
  t.match(ready.json(), { status: 'not ready', failing: ['dataDir'] }, 'the failing check is named')
  await sleep(200)
  t.match(server.output(), /"level":50[^\n]*"requestId":"trace-full-disk"[^\n]*commit of 1 writes/, "the actor's error is in the log with the request id")
  const consent = await call('POST', g.url('consents'), { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, JSON.stringify({ subject: 'x' }))
  t.ok([201, 507].includes(consent.status), `consents answer (${consent.status})`)
  const tokenRes = await tokenForm(server.url)
  if (tokenRes.status === 200) t.pass('the token endpoint answers')
  else refused(t, tokenRes, 'a token on a full disk')
  t.equal((await g.get('nodes/core/customer/before')).status, 200, 'reads keep working')
  t.equal((await g.get('nodes/core/customer/full-0')).status, 404, 'the refused write applied nothing')

  rmSync(filler)
  t.equal((await g.put('nodes/core/customer/after', { name: 'after' })).status, 204, 'writes succeed once space is free')
  t.equal((await getToken(server.url)).length > 0, true, 'tokens are issued again')
  t.notMatch(server.output(), /restarting/, 'no actor was restarted')

  await server.stop()
  const again = await startServer({ dataDir: dir })
  t.teardown(() => again.stop())
  const g2 = new Graph(again.url, 'demo', await getToken(again.url), g.consent)
  t.equal((await g2.get('nodes/core/customer/before')).status, 200, 'acknowledged writes survive')
  t.equal((await g2.get('nodes/core/customer/after')).status, 200)
})

t.test('data.mdb filling the disk as it grows: 507, nothing applied, counters unchanged', { skip: canMount ? false : 'mounting a tmpfs needs root' }, async (t) => {
  const dir = tmpfsFor(t, '4m')
  const server = await startServer({ dataDir: dir })
  t.teardown(() => server.stop())
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'grow'))
  const counter = 'counters/core/customer/c1/core/product/p1/core/viewed/r1/views'
  const count = async (): Promise<number> => {
    const res = await g.post(counter)
    if (res.status !== 200) throw new Error(`counter: ${res.status} ${res.text}`)
    return res.json<{ views: number }>().views
  }
  const first = await count()

  // No other file takes the space: every write adds a new node of ~20 KB until data.mdb cannot grow.
  const big = 'y'.repeat(20_000)
  let stored = 0
  let full: Answer | undefined
  for (let i = 0; i < 400 && full === undefined; i++) {
    const res = await g.put(`nodes/core/customer/grow-${i}`, { name: big })
    if (res.status === 204) stored++
    else full = res
  }
  if (full === undefined) throw new Error('the disk never filled')
  refused(t, full, `write ${stored} when data.mdb fills the disk`)
  for (let i = 0; i < 3; i++) refused(t, await g.put(`nodes/core/customer/more-${i}`, { name: big }), `write ${i} after`)
  // A small write may still fit in pages LMDB freed: then it is applied; refused, it is not.
  let counted = 0
  for (let i = 0; i < 3; i++) {
    const res = await g.post(counter)
    if (res.status === 200) counted++
    else refused(t, res, `counter increment ${i} on a full disk`)
  }
  const tokenRes = await tokenForm(server.url)
  if (tokenRes.status !== 200) refused(t, tokenRes, 'a token on a full disk')
  t.equal((await g.get(`nodes/core/customer/grow-${stored}`)).status, 404, 'the refused write applied nothing')
  t.equal((await g.get('nodes/core/customer/more-0')).status, 404)
  t.equal((await g.get('nodes/core/customer/grow-0')).status, 200, 'reads keep working')

  execFileSync('mount', ['-o', 'remount,size=16m', dir])
  t.equal((await g.put('nodes/core/customer/after', { name: 'after' })).status, 204, 'writes succeed once space is free')
  t.equal(await count(), first + counted + 1, 'the counter counts only the increments it acknowledged')
  t.equal(Number((await g.head('nodes/core/customer')).headers['x-total-count']), stored + 2, 'the type counts only the acknowledged nodes (and c1)')
  t.notMatch(server.output(), /restarting/, 'no actor was restarted')
  await server.stop()
})
