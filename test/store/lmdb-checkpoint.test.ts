// The checkpoint of a journaled shard's LMDB (workers/store/lmdb-checkpoint.ts)
// against the pinned lmdb-js: the meta-page layout it reads, and a start
// that puts the checkpoint's meta pages back opens the checkpoint's
// snapshot, whatever was committed after it.
import t from 'tap'
import { open } from 'lmdb'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CHECKPOINT_FILE, dropCheckpoint, restoreCheckpoint, SyncedSnapshot } from '../../workers/store/lmdb-checkpoint'
import { readMetaPages } from '../../workers/store/lmdb-meta'
import { removeDir, tempDir } from '../helpers/server'

function openNoSync(dir: string) {
  const env = open({ path: dir, noSync: true, maxDbs: 4 })
  return { env, db: env.openDB<string, string>({ name: 'values' }) }
}

/** Rewrites the checkpoint as if another process had written it (the start of a new process after a crash). */
function fromAnotherProcess(dir: string): void {
  const path = join(dir, CHECKPOINT_FILE)
  const record = JSON.parse(readFileSync(path, 'utf8')) as { writer: string }
  writeFileSync(path, JSON.stringify({ ...record, writer: 'another boot:1:1' }))
}

t.test('the meta pages read from the file are the ones LMDB commits', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const { env, db } = openNoSync(dir)
  for (let i = 0; i < 50; i++) env.transactionSync(() => { db.putSync(`k${i}`, 'v'.repeat(300)) })
  const stats = env.getStats() as { pageSize: number; lastTxnId: number; lastPageNumber: number }
  const pages = readMetaPages(join(dir, 'data.mdb'))!
  t.equal(pages.pageSize, stats.pageSize, 'page size')
  t.equal(pages.txnid, stats.lastTxnId, 'newest transaction id')
  t.equal(pages.lastPage, stats.lastPageNumber, 'last page')
  t.equal(pages.bytes.length, 2 * stats.pageSize, 'both meta pages')
  await env.close()
})

t.test('a start after another process committed past the checkpoint opens the checkpoint', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  let { env, db } = openNoSync(dir)
  env.transactionSync(() => { for (let i = 0; i < 200; i++) db.putSync(`k${i}`, `checkpointed ${i}`) })
  const snapshot = new SyncedSnapshot(env, dir)
  snapshot.takeNow()
  const checkpointTxn = readMetaPages(join(dir, 'data.mdb'))!.txnid
  // Many commits after it, each freeing pages the held snapshot still uses.
  for (let round = 0; round < 100; round++) env.transactionSync(() => { for (let i = 0; i < 200; i += 7) db.putSync(`k${i}`, `later ${round}`) })
  t.ok(readMetaPages(join(dir, 'data.mdb'))!.txnid > checkpointTxn, 'LMDB committed past the checkpoint')
  snapshot.release()
  await env.close()

  t.notOk(restoreCheckpoint(dir), 'the same process puts nothing back (its pages are all in memory)')
  fromAnotherProcess(dir)
  t.ok(restoreCheckpoint(dir), 'another process puts the meta pages back')
  t.equal(readMetaPages(join(dir, 'data.mdb'))!.txnid, checkpointTxn, 'the newest meta page is the checkpoint')
  t.notOk(restoreCheckpoint(dir), 'a second start has nothing to put back')
  ;({ env, db } = openNoSync(dir))
  for (let i = 0; i < 200; i++) t.equal(db.get(`k${i}`), `checkpointed ${i}`, `k${i} as at the checkpoint`)
  await env.close()
})

t.test('a checkpoint never applies to another file or after a writer that syncs', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const { env, db } = openNoSync(dir)
  env.transactionSync(() => { db.putSync('a', '1') })
  const snapshot = new SyncedSnapshot(env, dir)
  snapshot.takeNow()
  env.transactionSync(() => { db.putSync('a', '2') })
  snapshot.release()
  await env.close()
  fromAnotherProcess(dir)
  const record = JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8')) as { inode: number }
  t.equal(record.inode, statSync(join(dir, 'data.mdb')).ino, 'the checkpoint names the data file')
  writeFileSync(join(dir, CHECKPOINT_FILE), JSON.stringify({ ...record, inode: record.inode + 1 }))
  t.notOk(restoreCheckpoint(dir), 'a file that took the data file\'s place is left alone')
  dropCheckpoint(dir)
  t.notOk(restoreCheckpoint(dir), 'no checkpoint, nothing put back')
  const reopened = openNoSync(dir)
  t.equal(reopened.db.get('a'), '2', 'the newest commit stays')
  await reopened.env.close()
})
