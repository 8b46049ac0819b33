// The data directory lock (one holder, who names itself; free again once
// released) and the drain's bookkeeping (answers awaited, bounded, hooks run).
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { lockDataDir, tryLockDataDir } from '../../../src/start/data-dir-lock'
import { drain, exchangeEnded, exchangeStarted, inFlight, isDraining, onDrain } from '../../../src/http/in-flight'
import { ConfigError } from '../../../src/config/load-config'
import { sleep } from '../../../bench/wait'

t.test('one holder per data directory; the second learns who and where', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lock-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const lock = await lockDataDir(dir, 'the server')
  lock.setUrl('http://127.0.0.1:1234')
  const other = await tryLockDataDir(dir, 'the server')
  t.notOk('release' in other, 'the second attempt does not get it')
  t.match(other, { what: 'the server', pid: process.pid, url: 'http://127.0.0.1:1234' })
  const err = await lockDataDir(dir, 'the server').then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ConfigError)
  t.match((err as Error).message, new RegExp(`^data directory ${dir} is in use by the server \\(process ${process.pid}, since .*, listening http://127\\.0\\.0\\.1:1234\\); stop it first$`))
  lock.release()
  await sleep(50)
  const again = await tryLockDataDir(dir, 'the server')
  t.ok('release' in again, 'free again once released')
  if ('release' in again) again.release()
})

t.test('drain waits for the exchanges in flight, runs the hooks, and is bounded', async (t) => {
  let hooked = 0
  const unhook = onDrain(() => { hooked-- })
  onDrain(() => { hooked++ })
  unhook()
  exchangeStarted()
  exchangeStarted()
  let result: boolean | undefined
  const drained = drain(5000).then((r) => { result = r })
  t.ok(isDraining())
  t.equal(hooked, 1, 'registered hooks run once, unregistered ones not')
  exchangeEnded()
  await sleep(400)
  t.equal(result, undefined, 'still one in flight')
  exchangeEnded()
  await drained
  t.equal(result, true, 'answered: the drain ends')
  t.equal(inFlight(), 0)
  exchangeStarted()
  t.equal(await drain(300), false, 'one never answered: the drain gives up after its timeout')
  exchangeEnded()
})
