// A full disk: writes answer 507 and apply nothing, reads and every other
// endpoint keep answering, the actors are not restarted, and once space is
// free the next writes succeed without a restart. Needs root for a small
// tmpfs (CI runs as root); skipped otherwise.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { openSync, closeSync, writeSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Graph, call, createConsent } from '../helpers/client'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'

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

const probe = tempDir('disk-full-probe-')
const canMount = mountTmpfs(probe, '1m')
if (canMount) execFileSync('umount', [probe])
removeDir(probe)

t.test('a full disk answers 507 and recovers without a restart', { skip: canMount ? false : 'mounting a tmpfs needs root' }, async (t) => {
  const dir = tempDir('disk-full-')
  if (!mountTmpfs(dir, '40m')) throw new Error('mount failed')
  t.teardown(() => {
    try { execFileSync('umount', [dir]) } catch { /* already gone */ }
    removeDir(dir)
  })
  const server = await startServer({ dataDir: dir })
  t.teardown(() => server.stop())
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'full'))
  t.equal((await g.put('nodes/core/customer/before', { name: 'before' })).status, 204)

  const filler = join(dir, 'filler')
  fill(filler)
  const big = 'x'.repeat(20_000)
  for (let i = 0; i < 5; i++) {
    const res = await g.put(`nodes/core/customer/full-${i}`, { name: big })
    t.equal(res.status, 507, `write ${i} on a full disk: ${res.text.slice(0, 120)}`)
    t.equal(res.json<{ type: string }>().type, 'insufficient_storage')
  }
  const traced = await g.put('nodes/core/customer/full-traced', { name: big }, { 'platform-context-trace-id': 'trace-full-disk' })
  t.equal(traced.status, 507)
  const ready = await call('GET', `${server.url}/health/ready`)
  t.equal(ready.status, 503, 'not ready on a full disk')
  t.match(ready.json(), { status: 'not ready', failing: ['dataDir'] }, 'the failing check is named')
  await new Promise((r) => setTimeout(r, 200))
  t.match(server.output(), /"level":50[^\n]*"requestId":"trace-full-disk"[^\n]*commit of 1 writes/, "the actor's error is in the log with the request id")
  const consent = await call('POST', g.url('consents'), { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, JSON.stringify({ subject: 'x' }))
  t.ok([201, 507].includes(consent.status), `consents answer (${consent.status})`)
  const tokenRes = await call('POST', `${server.url}/oauth2/v1/token`, { authorization: `Basic ${Buffer.from('demo-enricher:demo-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials')
  t.ok([200, 507].includes(tokenRes.status), `the token endpoint answers (${tokenRes.status})`)
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
