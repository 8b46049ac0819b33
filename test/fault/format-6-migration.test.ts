// A data directory of disk format 5 (docs/design/disk-format.md) started by
// this build: its shards get the subject and relation-owner indexes built
// from their consents and relations, so consents created before list, export
// and erase like new ones, without the client and change time they never
// recorded.
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { open as openLmdb } from 'lmdb'
import { FORMAT_VERSION } from '../../src/shards/manifest'
import { shardOf } from '../../src/shards/tenant-hash'
import { DB_OPTIONS } from '../../workers/store/shard-store'
import { call, createConsent, Graph } from '../helpers/client'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'

type Json = Record<string, unknown>
const SHARDS = 4

t.test('a format-5 directory is migrated: consents created before list, export and erase', async (t) => {
  const dir = tempDir('format-5-')
  t.teardown(() => removeDir(dir))
  let server = await startServer({ dataDir: dir })
  let token = await getToken(server.url)
  const ref = await createConsent(server.url, 'demo', token, 'old-subject')
  const g = new Graph(server.url, 'demo', token, ref)
  t.equal((await g.put('nodes/core/customer/old', { name: 'Before Six' })).status, 204)
  t.equal((await g.post('counters/core/customer/old/core/product/p1/core/viewed/v1/views')).status, 200)
  await server.stop()

  // What a format-5 build left: no subject or relation-owner index, consents without client and change time.
  const env = openLmdb({ path: join(dir, 'data', 'shards', String(shardOf('demo', SHARDS))), maxDbs: 32 })
  const consents = env.openDB<Json, (string | number)[]>('consents', DB_OPTIONS)
  await env.transaction(() => {
    for (const name of ['subjects', 'ownedRelations']) {
      const db = env.openDB<number, (string | number)[]>(name, DB_OPTIONS)
      for (const key of db.getKeys()) db.removeSync(key)
    }
    const { client: _client, changed: _changed, ...older } = consents.get(['demo', ref])!
    consents.putSync(['demo', ref], older)
  })
  await env.close()
  const manifest = join(dir, 'data', 'manifest.json')
  writeFileSync(manifest, JSON.stringify({ ...JSON.parse(readFileSync(manifest, 'utf8')) as Json, format: 5, formatVersion: 5 }))

  server = await startServer({ dataDir: dir })
  t.teardown(() => server.stop())
  token = await getToken(server.url)
  const auth = { authorization: `Bearer ${token}` }
  const G = `${server.url}/graph/v1/demo`
  t.equal((JSON.parse(readFileSync(manifest, 'utf8')) as Json).formatVersion, FORMAT_VERSION, 'the manifest records the current format')
  const list = await call('GET', `${G}/consents?subject=old-subject`, auth)
  t.same(list.json(), [{ consentReference: ref, subject: 'old-subject', status: 'granted', revokedProperties: [], created: (list.json<Json[]>()[0] ?? {}).created }], 'listed, without client and change time')
  t.type((list.json<Json[]>()[0] ?? {}).created, 'number')
  const exported = (await call('GET', `${G}/subject/export?subject=old-subject`, auth)).json<Json[]>()
  t.match(exported.filter((e) => e.kind === 'node'), [{ node: { id: 'old' }, properties: { name: 'Before Six' } }], 'its node exports')
  t.match(exported.filter((e) => e.kind === 'relation'), [{ from: { id: 'old' }, to: { id: 'p1' }, properties: { views: 1 } }], 'and its relation, through the rebuilt owner index')
  t.equal((await call('DELETE', `${G}/subject?subject=old-subject`, auth)).status, 204)
  t.match((await call('GET', `${G}/consents?subject=old-subject`, auth)).json(), [{ status: 'revoked', changed: Number }], 'erased, and the revocation recorded its change')
})
