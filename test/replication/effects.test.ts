// Cluster mode's replication pieces on one machine (docs/design/replication.md, "Leases
// and replication"): the recorder sees exactly what a batch commits (a
// rolled-back child transaction's writes dropped), apply reproduces it in
// another shard with the sequence, and the shard's stream fences a deposed
// owner and deduplicates a retried append. A temp LMDB and one local
// nats-server.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { ABORT, type Database } from 'lmdb'
import type { Key } from '../../workers/store/keys'
import { connect } from '@nats-io/transport-node'
import { closeShard, openShard, type ShardStore } from '../../workers/store/shard-store'
import { Recorder, shardDatabases } from '../../workers/actor/replication/recorder'
import { applyEffects, applyEntry, appliedSequence, grantErased, grantSequence, grantsToErase, type Applied } from '../../workers/actor/replication/apply'
import { decodeEntry, encodeEntry } from '../../src/replication/effects'
import { Fenced, ShardLog } from '../../workers/actor/replication/shard-log'
import { natsServerAvailable, startNatsServer } from '../helpers/nats-server'
import { removeDir, tempDir } from '../helpers/server'

const masterKey = randomBytes(32)

function shardIn(t: { teardown(fn: () => Promise<void>): void }, shard = 0): ShardStore {
  const dir = tempDir('replication-')
  const store = openShard(dir, shard, masterKey)
  t.teardown(async () => {
    await closeShard(store)
    removeDir(dir)
  })
  return store
}

/** A shard database as the recorder sees it (any value). */
const db = (store: ShardStore, name: string): Database<unknown, Key> => shardDatabases(store).get(name)!

/** Every database's entries, for comparing two shards. */
function contents(store: ShardStore): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {}
  for (const [name, db] of shardDatabases(store)) out[name] = [...db.getRange()].map(({ key, value }) => [key, value])
  return out
}

t.test('recorded effects applied to another shard give the same databases, key slots and sequence', async (t) => {
  const owner = shardIn(t)
  const standby = shardIn(t)
  const recorder = new Recorder(owner, ABORT)
  db(owner, 'nodes').putSync(['demo', 'core', 'customer', 'old'], { v: 0 })
  recorder.start()
  owner.env.transactionSync(() => {
    db(owner, 'nodes').putSync(['demo', 'core', 'customer', 'a\ud800'], { sealed: Buffer.from([1, 2, 3]), n: 1 })
    db(owner, 'counts').putSync(['demo', 'core', 'customer'], 7)
    db(owner, 'events').putSync(['demo', 1], { type: 'node.created' })
    owner.keys.create(3)
    // A write of the batch that fails alone: rolled back with what it recorded.
    try {
      owner.env.childTransaction(() => {
        db(owner, 'nodes').putSync(['demo', 'core', 'customer', 'rolled-back'], { v: 1 })
        throw new Error('this write fails')
      })
    } catch {
      // expected
    }
    owner.env.childTransaction(() => { db(owner, 'nodes').putSync(['demo', 'core', 'customer', 'aborted'], { v: 2 }); return ABORT })
    db(owner, 'nodes').removeSync(['demo', 'core', 'customer', 'old'])
  })
  const effects = recorder.take()
  t.same(effects.map((e) => ('slot' in e ? `slot ${e.slot}` : 'cleared' in e ? `clear ${e.cleared}` : `${e.db} ${e.removed === true ? 'remove' : 'put'} ${JSON.stringify(e.key)}`)), [
    'nodes put ["demo","core","customer","a\\ud800"]',
    'counts put ["demo","core","customer"]',
    'events put ["demo",1]',
    'slot 3',
    'nodes remove ["demo","core","customer","old"]',
  ], 'every committed change, in order; the rolled-back ones dropped')
  db(owner, 'nodes').putSync(['demo', 'x'], 1)
  t.same(recorder.take(), [], 'nothing is recorded outside start() and take()')
  db(owner, 'nodes').removeSync(['demo', 'x'])

  // Through the wire and into the standby, with its sequence, in one transaction.
  const wire = encodeEntry({ node: 'host1', epoch: 4, effects })
  const entry = decodeEntry(wire)
  db(standby, 'nodes').putSync(['demo', 'core', 'customer', 'old'], { v: 0 })
  const standbyRecorder = new Recorder(standby, ABORT)
  await standby.env.transaction(() => applyEffects(standbyRecorder, 'effects' in entry ? entry.effects : [], 42))
  t.same(contents(standby), contents(owner), 'the same databases on both')
  t.equal(appliedSequence(standby), 42, 'the applied sequence committed with the effects')
  t.equal(appliedSequence(owner), 0)
  t.same(standby.keyFile.read(3), owner.keyFile.read(3), 'the wrapped key slot (sealed by the master key, never plaintext)')
  t.ok(standby.keys.get(3)?.equals(owner.keys.get(3)!), 'the data key opens the same on the standby')
  t.same(standbyRecorder.take(), [], 'a standby records nothing it applies')
})

t.test('a revoked consent applied on a standby names its key slot for destruction', async (t) => {
  const standby = shardIn(t)
  const recorder = new Recorder(standby, ABORT)
  standby.keys.create(5)
  const revoked = await standby.env.transaction(() => applyEffects(recorder, [{ db: 'consents', key: ['demo', 'ref'], value: { status: 'revoked', slot: 5 } }], 1))
  t.same(revoked, [5])
})

t.test('a key grant: applied with its sequence, erased once superseded or revoked; one no KEK here opens is refused', async (t) => {
  const owner = shardIn(t)
  const standby = shardIn(t)
  const recorder = new Recorder(standby, ABORT)
  owner.keys.create(2)
  const grant = { slot: 2, wrapped: Uint8Array.from(owner.keyFile.read(2)!) }
  const apply = async (entry: Parameters<typeof applyEntry>[1], sequence: number): Promise<Applied> => {
    const into: Applied = { revoked: [], erasures: false }
    await standby.env.transaction(() => applyEntry(recorder, entry, sequence, into))
    return into
  }
  t.same(await apply({ node: 'a', epoch: 1, grant }, 7), { revoked: [], erasures: false })
  t.ok(standby.keys.get(2)?.equals(owner.keys.get(2)!), 'the granted key opens on the standby')
  t.equal(grantSequence(standby, 2), 7, "the grant's stream sequence is recorded by slot")
  // A KEK rotation grants the slot again: the first grant message is to be erased.
  t.same(await apply({ node: 'a', epoch: 1, grant }, 9), { revoked: [], erasures: true })
  t.same(grantsToErase(standby), [7])
  t.equal(grantSequence(standby, 2), 9)
  t.same(await apply({ node: 'a', epoch: 1, effects: [{ db: 'consents', key: ['demo', 'ref'], value: { status: 'revoked', slot: 2 } }] }, 10), { revoked: [2], erasures: true }, 'a revocation: the key to destroy, its grant to erase')
  t.same(grantsToErase(standby), [7, 9])
  t.equal(grantSequence(standby, 2), undefined)
  await grantErased(standby, 7)
  t.same(grantsToErase(standby), [9], 'an erased grant leaves the list')
  const foreignDir = tempDir('replication-')
  const foreign = openShard(foreignDir, 0, randomBytes(32))
  foreign.keys.create(4)
  const stranger = { slot: 4, wrapped: Uint8Array.from(foreign.keyFile.read(4)!) }
  await closeShard(foreign)
  removeDir(foreignDir)
  await t.rejects(apply({ node: 'a', epoch: 1, grant: stranger }, 11), /does not open with this host's KEK file/, 'a grant under a KEK this host lacks is not applied')
  t.equal(appliedSequence(standby), 10, 'and the shard stops before it')
})

t.test('the shard stream: appends after the expected sequence, fences a deposed owner, deduplicates a retry', { skip: natsServerAvailable() ? false : 'nats-server not installed' }, async (t) => {
  const server = await startNatsServer()
  const nc = await connect({ servers: server.url })
  t.teardown(async () => {
    await nc.close()
    await server.stop()
  })
  const log = await ShardLog.open(nc, 7, 1, 2000)
  const again = await ShardLog.open(nc, 7, 1, 2000)
  t.equal(await log.lastSequence(), 0, 'a new stream is empty')
  const data = encodeEntry({ node: 'a', epoch: 1, effects: [] })
  t.equal(await log.append(data, 0, '7.1.a.1'), 1)
  t.equal(await again.append(data, 0, '7.1.a.1'), 1, 'the same message id again is stored once (a retried append)')
  t.equal(await log.lastSequence(), 1)
  // Host b claims: its claim entry moves the stream on.
  t.equal(await again.append(encodeEntry({ node: 'b', epoch: 2, effects: [] }), 1, '7.2.b.2'), 2)
  const refused = await log.append(data, 1, '7.2.a.1').then(() => 'stored', (err: unknown) => (err instanceof Fenced ? 'fenced' : String(err)))
  t.equal(refused, 'fenced', "the former owner's next append is refused")
  t.equal(await log.lastSequence(), 2, 'and not stored')
  const seen: number[] = []
  const tail = await log.follow(1, 5000)
  for await (const m of tail) {
    seen.push(m.seq)
    t.equal(decodeEntry(m.data).node, m.seq === 1 ? 'a' : 'b')
    if (m.seq === 2) break
  }
  t.same(seen, [1, 2], 'a standby reads every entry in order')
  // Secure erase: the message is gone, a standby reading again skips it, and erasing it again is no error.
  t.equal(await log.append(encodeEntry({ node: 'b', epoch: 2, effects: [] }), 2, '7.3.b.2'), 3)
  await log.erase(2)
  await again.erase(2)
  const after: number[] = []
  const tail2 = await log.follow(1, 5000)
  for await (const m of tail2) {
    after.push(m.seq)
    if (m.seq === 3) break
  }
  t.same(after, [1, 3], 'the erased entry is skipped')
})
