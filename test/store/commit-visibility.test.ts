// The hook on lmdb-js's write thread (workers/store/commit-visibility.ts)
// against the pinned lmdb-js: inside a transaction callback the running
// transaction's visibility is known; when the write thread reports it before
// lmdb-js's own promise (not for every transaction: the journal then waits
// for that promise), a read at that moment sees the write.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'lmdb'
import { CommitVisibility } from '../../workers/store/commit-visibility'

t.test('a transaction reports when it is visible, before lmdb-js resolves it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'visibility-'))
  const env = open({ path: dir, overlappingSync: true })
  t.teardown(async () => {
    await env.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const db = env.openDB<string, string>({ name: 'x' })
  const visibility = new CommitVisibility(env, () => env.resetReadTxn())
  let visibleFirst = 0
  for (let i = 0; i < 40; i++) {
    let visible: Promise<void> | undefined
    const committed = env.transaction(() => {
      db.putSync(`k${i}`, `v${i}`)
      visible = visibility.ofRunningTransaction()
    })
    const seen = await Promise.race([
      committed.then(() => 'committed'),
      (async () => {
        while (visible === undefined) await new Promise<void>((resolve) => setImmediate(resolve))
        await visible
        return db.get(`k${i}`) === `v${i}` ? 'visible' : 'visible but not read'
      })(),
    ])
    t.not(seen, 'visible but not read', `transaction ${i}: once reported visible, a read sees it`)
    if (seen === 'visible') visibleFirst++
    await committed
  }
  t.ok(visibleFirst > 0, `${visibleFirst} of 40 transactions reported visible before lmdb-js resolved them`)
  t.equal(visibility.ofRunningTransaction(), undefined, 'outside a transaction callback there is none')
})
