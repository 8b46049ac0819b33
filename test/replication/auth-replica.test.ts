// Two hosts' replicas of the auth store against one local nats-server: the
// first claims the auth lease and writes through the auth models as the
// front does; concurrent failed sign-ins and concurrent exchanges of one code
// stay exact inside a batch; the second host follows the stream into its own
// store; a write on the standby is refused with a 503; when the owner shuts
// down the standby claims at once and serves, with everything acknowledged.
import t from 'tap'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { AUTH_STREAM } from '../../src/contract/cluster-names'
import { leaseBucket } from '../../src/replication/lease-bucket'
import { durable, openAuthStore, type AuthStore } from '../../src/auth/models/auth-store'
import { AccessTokens } from '../../src/auth/models/access-tokens'
import { Lockout } from '../../src/auth/models/lockout'
import { startAuthReplica, type AuthReplica } from '../../src/cluster/auth-replica'
import { ApiError } from '../../src/core/errors'
import { natsServerAvailable, startNatsServer } from '../helpers/nats-server'
import { removeDir, tempDir } from '../helpers/server'
import { sleep, until } from '../../bench/wait'

const LEASE_MS = 1000


type Host = { store: AuthStore; replica: AuthReplica; tokens: AccessTokens; lockout: Lockout }

/** One local nats-server and the hosts started on it; all stopped and removed at teardown. */
async function authCluster(t: { teardown(fn: () => Promise<void>): void }): Promise<{ url: string; host(node: string, snapshotEvery?: number): Promise<Host>; gained: string[] }> {
  const server = await startNatsServer()
  const nc = await connect({ servers: server.url })
  const kv = await leaseBucket(nc, 1)
  const made: { store: AuthStore; dir: string; replica: AuthReplica }[] = []
  t.teardown(async () => {
    for (const m of made) {
      await m.replica.close().catch(() => undefined)
      await m.store.env.close()
      removeDir(m.dir)
    }
    await nc.close()
    await server.stop()
  })
  const gained: string[] = []
  /** `snapshotEvery`: the owner snapshots the store once this many batches were appended since its last snapshot. */
  async function host(node: string, snapshotEvery = 10_000): Promise<Host> {
    const dir = tempDir('auth-replica-')
    const store = openAuthStore(dir)
    const options = { servers: [server.url], nodeId: node, kekFile: '', hostUrl: undefined, leaseMs: LEASE_MS, durability: 'local' as const, snapshots: { everyEntries: snapshotEvery, everyMs: 3_600_000, keep: 1 } }
    const tokens = new AccessTokens(store, 3600)
    // As the front does (src/cluster/auth-front.ts): records cached as a standby may have been revoked since.
    const replica = await startAuthReplica({ nc, kv, options, store, dataDir: dir, url: `http://${node}`, gained: () => { tokens.forget(); gained.push(node) } })
    made.push({ store, dir, replica })
    return { store, replica, tokens, lockout: new Lockout(store) }
  }
  return { url: server.url, host, gained }
}

const SKIP = natsServerAvailable() ? false : 'nats-server not installed'

t.test('the auth store replicated: exact batches, a follower, a take-over', { skip: SKIP }, async (t) => {
  const { host, gained } = await authCluster(t)

  const a = await host('a')
  t.ok(a.replica.servesHere(), 'the first host claims the free auth lease at once')
  t.same(gained, ['a'], 'and is told')
  const b = await host('b')
  t.notOk(b.replica.servesHere(), 'the second follows')
  t.equal(b.replica.owner()?.node, 'a', 'and believes the first')

  const issued = await a.tokens.issue({ client: 'c', tenant: 'demo', scopes: ['s'], sub: undefined })
  t.ok(a.tokens.verify(issued.token), 'a token issued on the owner is valid there')
  // Ten concurrent failed sign-ins: one batch (or two), each seeing those before it.
  await Promise.all(Array.from({ length: 10 }, () => a.lockout.failure('user:u1')))
  t.equal(a.store.lockouts.get('user:u1')?.failures, 10, 'ten concurrent failures count ten')
  // One code, two concurrent exchanges in one batch: one wins.
  void a.store.codes.put('code-hash', { client: 'c', tenant: 'demo', scopes: [], sub: 'u1', exp: Date.now() + 60_000, redirectUri: 'x', redirectUriGiven: false, codeChallenge: undefined, codeChallengeMethod: undefined, nonce: undefined, authTime: 0 })
  await durable(a.store)
  const consume = (): Promise<boolean> => a.store.env.transaction(() => {
    const current = a.store.codes.get('code-hash')
    if (current === undefined || current.used !== undefined) return false
    a.store.codes.putSync('code-hash', { ...current, used: { access: 'x', refresh: 'y' } })
    return true
  })
  const wins = await Promise.all([consume(), consume()])
  t.same(wins.sort(), [false, true], 'two concurrent exchanges of one code: exactly one wins')

  await until('b to follow', () => b.store.lockouts.get('user:u1')?.failures === 10 && b.store.codes.get('code-hash')?.used !== undefined)
  t.ok(b.tokens.verify(issued.token), "the standby's store holds the issued token")

  const refused = await b.tokens.issue({ client: 'c', tenant: 'demo', scopes: ['s'], sub: undefined }).then(() => 'stored', (err: unknown) => err)
  t.ok(refused instanceof ApiError && refused.type === 'service_unavailable', 'a write on the standby is refused with a 503')

  t.ok(await a.tokens.revoke(issued.token), 'revoked on the owner')
  await a.replica.close()
  await until('b to claim the released lease', () => b.replica.servesHere(), 5000)
  t.same(gained, ['a', 'b'], 'the standby serves once the owner handed over')
  t.notOk(b.tokens.verify(issued.token), 'the revocation acknowledged by the former owner holds on the new one')
  await b.lockout.failure('user:u1')
  t.equal(b.store.lockouts.get('user:u1')?.failures, 11, 'the lock-out count goes on from where it was')
})

t.test("the auth store's snapshots: the stream is purged, and an empty host restores and follows", { skip: SKIP }, async (t) => {
  const { url, host } = await authCluster(t)
  const a = await host('a', 20)
  const issued: string[] = []
  // Each issue is one batch at least: enough for the owner's beat to snapshot and purge.
  for (let i = 0; i < 40; i++) issued.push((await a.tokens.issue({ client: 'c', tenant: 'demo', scopes: ['s'], sub: undefined })).token)
  const nc = await connect({ servers: url })
  t.teardown(() => nc.close())
  const jsm = await jetstreamManager(nc)
  const first = async (): Promise<number> => (await jsm.streams.info(AUTH_STREAM)).state.first_seq
  const purged = Date.now() + 10_000
  while (await first() <= 1 && Date.now() < purged) await sleep(100)
  const after = await first()
  t.ok(after > 1, `the stream is purged below the snapshot (first entry now ${after})`)

  const b = await host('b')
  t.notOk(b.replica.servesHere(), 'a new, empty host follows')
  await until('b to hold every token', () => issued.every((token) => b.tokens.verify(token) !== undefined))
  t.pass('it restored the snapshot, then followed the stream: every token issued before it started is in its store')
  const later = (await a.tokens.issue({ client: 'c', tenant: 'demo', scopes: ['s'], sub: undefined })).token
  await until('b to follow a later write', () => b.tokens.verify(later) !== undefined)
  t.pass('and a write after its restore reaches it through the stream')
})
