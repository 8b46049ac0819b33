// The shard's value encoding: plain msgpack maps decoded as objects, and
// values written by earlier builds (msgpackr records with inline structures)
// still read the same.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { open } from 'lmdb'
import { closeShard, openShard, shardPath } from '../../../workers/store/shard-store'
import { removeDir, tempDir } from '../../helpers/server'

t.test('values written with the old default encoding read back as the same objects', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const element = { c: 1_700_000_000_000, b: 'client', o: 'cr_x', k: 3, s: randomBytes(40) }

  const first = openShard(dir, 0, randomBytes(32))
  await closeShard(first)
  const old = open({ path: shardPath(dir, 0), maxDbs: 16 })
  await old.openDB('nodes', { encoding: 'msgpack' }).put(['demo', 'core', 'customer', 'old'], element)
  await old.close()

  const store = openShard(dir, 0, randomBytes(32))
  t.teardown(() => closeShard(store))
  await store.nodes.put(['demo', 'core', 'customer', 'new'], element)
  for (const id of ['old', 'new']) {
    const read = store.nodes.get(['demo', 'core', 'customer', id])
    t.same(read, element, `${id}: the same fields and values`)
    t.ok(read !== undefined && Object.getPrototypeOf(read) === Object.prototype, `${id}: a plain object, not a Map`)
    t.ok(Buffer.from(read!.s).equals(element.s), `${id}: the sealed bytes are intact`)
  }
})
