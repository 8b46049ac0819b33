// A full disk told from a bug: ENOSPC and the like always, EIO only while the
// file system of an LMDB environment is out of space (test/fault/disk-full.test.ts
// fills one; here the disk has room, so EIO is a device error: 500).
import t from 'tap'
import { tmpdir } from 'node:os'
import { isDiskFull, noteStorageDir } from '../../../src/core/storage-failure'

const lmdbError = (message: string, code: number): Error => Object.assign(new Error(message), { code })

t.test('ENOSPC, EDQUOT and a full map are a full disk', async (t) => {
  t.ok(isDiskFull(lmdbError('No space left on device', 28)))
  t.ok(isDiskFull(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })))
  t.ok(isDiskFull(lmdbError('Disk quota exceeded', 122)))
  t.ok(isDiskFull(lmdbError('MDB_MAP_FULL: Environment mapsize limit reached', -30792)))
})

t.test('EIO on a disk with room is not a full disk', async (t) => {
  noteStorageDir(tmpdir())
  t.notOk(isDiskFull(lmdbError('Input/output error', 5)))
  t.notOk(isDiskFull(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' })))
  t.notOk(isDiskFull(new Error('something else')))
  t.notOk(isDiskFull('ENOSPC'), 'only errors')
})
