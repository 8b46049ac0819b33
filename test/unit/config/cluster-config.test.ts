import t from 'tap'
import { resolve } from 'node:path'
import { ConfigError, loadConfig, usage } from '../../../src/config/load-config'

const SNAPSHOTS = { everyEntries: 10000, everyMs: 3_600_000, keep: 2 }
const FULL = { NATS_URL: 'nats://10.0.0.1:4222, nats://10.0.0.2:4222', NODE_ID: 'host-a', KEK_FILE: 'secrets/kek' }

function configError(t: tap.Test, fn: () => unknown, pattern: RegExp): void {
  const err = t.throws(fn) as Error
  t.ok(err instanceof ConfigError, 'a ConfigError')
  t.match(err.message, pattern)
}

t.test('no cluster option: the single-machine mode', async (t) => {
  t.equal(loadConfig([], {}).cluster, undefined)
})

t.test('all three options: cluster mode with the default lease', async (t) => {
  t.same(loadConfig([], FULL).cluster, {
    servers: ['nats://10.0.0.1:4222', 'nats://10.0.0.2:4222'], nodeId: 'host-a', kekFile: resolve('secrets/kek'), hostUrl: undefined, leaseMs: 5000, durability: 'local', snapshots: SNAPSHOTS,
  })
})

t.test('flags set them too, and win', async (t) => {
  const c = loadConfig(['--nats-url', 'nats://n1:4222', '--node-id', 'b', '--kek-file', '/k', '--lease-ms=2000'], FULL).cluster
  t.same(c, { servers: ['nats://n1:4222'], nodeId: 'b', kekFile: '/k', hostUrl: undefined, leaseMs: 2000, durability: 'local', snapshots: SNAPSHOTS })
})

t.test('--cluster-url: the host\'s own address beside a shared public URL', async (t) => {
  const c = loadConfig(['--public-url', 'https://platform.example.com/', '--cluster-url', 'http://10.0.0.21:8080/'], FULL)
  t.equal(c.publicUrl, 'https://platform.example.com', 'the public URL, trailing slash dropped')
  t.equal(c.cluster?.hostUrl, 'http://10.0.0.21:8080', 'its own, likewise')
  t.equal(loadConfig([], { ...FULL, CLUSTER_URL: 'http://h:1' }).cluster?.hostUrl, 'http://h:1', 'or from CLUSTER_URL')
  configError(t, () => loadConfig(['--cluster-url', 'h:8080'], FULL), /CLUSTER_URL must be an http\(s\) URL, got "h:8080"/)
  configError(t, () => loadConfig(['--cluster-url', 'http://h:1'], {}), /--cluster-url applies only in cluster mode/)
})

t.test('half a cluster configuration names what is missing', async (t) => {
  configError(t, () => loadConfig([], { NATS_URL: 'nats://n:4222' }), /missing --node-id, --kek-file/)
  configError(t, () => loadConfig([], { NODE_ID: 'a', KEK_FILE: 'k' }), /missing --nats-url$/)
  configError(t, () => loadConfig(['--lease-ms', '3000'], {}), /--lease-ms applies only in cluster mode/)
  configError(t, () => loadConfig([], { SNAPSHOTS_KEPT: '3' }), /--snapshots-kept applies only in cluster mode/)
})

t.test('--cluster-durability: local by default, or quorum', async (t) => {
  t.equal(loadConfig(['--cluster-durability', 'quorum'], FULL).cluster?.durability, 'quorum')
  t.equal(loadConfig([], { ...FULL, CLUSTER_DURABILITY: 'local' }).cluster?.durability, 'local', 'or from CLUSTER_DURABILITY')
  configError(t, () => loadConfig([], { ...FULL, CLUSTER_DURABILITY: 'none' }), /CLUSTER_DURABILITY must be one of local, quorum, got "none"/)
  configError(t, () => loadConfig(['--cluster-durability', 'quorum'], {}), /--cluster-durability applies only in cluster mode/)
})

t.test('snapshot options', async (t) => {
  const c = loadConfig(['--snapshot-entries', '50', '--snapshot-interval', '10m', '--snapshots-kept', '3'], FULL).cluster
  t.same(c?.snapshots, { everyEntries: 50, everyMs: 600_000, keep: 3 })
  configError(t, () => loadConfig([], { ...FULL, SNAPSHOTS_KEPT: '0' }), /SNAPSHOTS_KEPT must be between 1 and 100/)
  configError(t, () => loadConfig([], { ...FULL, SNAPSHOT_INTERVAL: 'soon' }), /SNAPSHOT_INTERVAL must be/)
})

t.test('bad values are refused', async (t) => {
  configError(t, () => loadConfig([], { ...FULL, LEASE_MS: '500' }), /LEASE_MS must be between 1000 and 600000/)
  configError(t, () => loadConfig([], { ...FULL, LEASE_MS: '5s' }), /LEASE_MS must be a whole number/)
  configError(t, () => loadConfig([], { ...FULL, NODE_ID: 'a.b' }), /NODE_ID must be/)
  configError(t, () => loadConfig([], { ...FULL, NATS_URL: 'http://x:1' }), /not a NATS URL/)
  configError(t, () => loadConfig([], { ...FULL, NATS_URL: ' , ' }), /NATS_URL names no server/)
})

t.test('--help lists the cluster options', async (t) => {
  for (const flag of ['--nats-url', '--node-id', '--kek-file', '--lease-ms', '--cluster-durability', '--snapshot-entries', '--snapshot-interval', '--snapshots-kept']) t.match(usage('main.js'), flag)
})
