// The metrics a dashboard needs that can be moved without a server: build
// info, OAuth errors by a bounded error value, attempt-limiter refusals, the
// piscina pools' queue and wait, and shard actor exits by reason (threads
// that throw or run out of their heap). Each is read from the registry's
// text through the strict exposition parser, as a scraper reads it.
import t, { type Test } from 'tap'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { AttemptLimiter } from '../../../src/auth/helpers/attempt-limiter'
import { TaskGate } from '../../../src/auth/helpers/task-gate'
import { ActorThreads } from '../../../src/shards/actor-threads'
import { BUILD_INFO_FILE, buildInfo, packageRoot, registerBuildInfo } from '../../../src/telemetry/build-info'
import { oauthErrorAnswered, registry } from '../../../src/telemetry/metrics'
import type { ActorConfig } from '../../../src/contract/messages'
import { parsePrometheusText, total, type Family } from '../../helpers/prometheus-text'
import { removeDir, tempDir } from '../../helpers/server'
import { sleep } from '../../../bench/wait'

const scrape = async (): Promise<Map<string, Family>> => parsePrometheusText(await registry.metrics())

t.test('build_info: the package version, a commit from BUILD_COMMIT or the build\'s file, else unknown; Node\'s version', async (t) => {
  const version = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version
  const root = tempDir('build-info-')
  t.teardown(() => removeDir(root))
  writeFileSync(join(root, 'package.json'), '{"version":"9.8.7"}')
  t.same(buildInfo({}, root), { version: '9.8.7', commit: 'unknown', node: process.version }, 'no commit known')
  t.equal(buildInfo({ BUILD_COMMIT: 'ABCDEF1234' }, root).commit, 'abcdef1234', 'from the environment')
  t.equal(buildInfo({ BUILD_COMMIT: 'main; rm -rf /' }, root).commit, 'unknown', 'anything but a hash is not a label value')
  mkdirSync(join(root, 'dist'))
  writeFileSync(join(root, 'dist', BUILD_INFO_FILE), '{"commit":"0123456789abcdef0123456789abcdef01234567"}')
  t.equal(buildInfo({}, root).commit, '0123456789abcdef0123456789abcdef01234567', 'from the file the build wrote')
  t.equal(buildInfo({ BUILD_COMMIT: 'fedcba9' }, root).commit, 'fedcba9', 'the environment first')

  registerBuildInfo({ version, commit: 'fedcba9', node: process.version })
  const samples = (await scrape()).get('build_info')!.samples
  t.same(samples, [{ name: 'build_info', labels: { version, commit: 'fedcba9', node: process.version }, value: 1 }])
})

t.test('oauth_errors_total: by the OAuth error value; one outside the known set is other', async (t) => {
  const before = await scrape()
  oauthErrorAnswered('invalid_grant')
  oauthErrorAnswered('invalid_grant')
  oauthErrorAnswered('invalid_client')
  oauthErrorAnswered('made_up_by_someone')
  const after = await scrape()
  const moved = (error: string): number => total(after, 'oauth_errors_total', { error }) - total(before, 'oauth_errors_total', { error })
  t.equal(moved('invalid_grant'), 2)
  t.equal(moved('invalid_client'), 1)
  t.equal(moved('other'), 1)
  t.notOk(after.get('oauth_errors_total')!.samples.some((s) => s.labels.error === 'made_up_by_someone'))
})

t.test('auth_attempts_refused_total: the per-address and the per-account budget', async (t) => {
  const before = await scrape()
  const bySource = new AttemptLimiter({ source: { capacity: 1, refillMs: 60_000 }, account: { capacity: 100, refillMs: 60_000 }, maxKeys: 10 })
  bySource.admit('10.0.0.1', 'a', true).end(true)
  t.throws(() => bySource.admit('10.0.0.1', 'b', true))
  const byAccount = new AttemptLimiter({ source: { capacity: 100, refillMs: 60_000 }, account: { capacity: 1, refillMs: 60_000 }, maxKeys: 10 })
  byAccount.admit('10.0.0.1', 'a', true).end(true)
  t.throws(() => byAccount.admit('10.0.0.2', 'a', true))
  t.throws(() => byAccount.admit('10.0.0.3', 'a', true))
  const after = await scrape()
  const moved = (limit: string): number => total(after, 'auth_attempts_refused_total', { limit }) - total(before, 'auth_attempts_refused_total', { limit })
  t.equal(moved('source'), 1)
  t.equal(moved('account'), 2)
})

t.test('worker pool metrics: tasks queued behind the busy threads, and how long each waited', async (t) => {
  const gate = new TaskGate(1, 'signing')
  t.teardown(() => gate.close())
  const before = await scrape()
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  const first = gate.run(() => held)
  const rest = [gate.run(async () => 2), gate.run(async () => 3)]
  const during = await scrape()
  t.equal(total(during, 'worker_pool_queued_tasks', { pool: 'signing' }), 2, 'two wait for the one thread')
  await sleep(20)
  release()
  t.same(await Promise.all([first, ...rest]), [undefined, 2, 3], 'in order, each with its own result')
  const after = await scrape()
  t.equal(total(after, 'worker_pool_queued_tasks', { pool: 'signing' }), 0)
  const count = total(after, 'worker_pool_wait_seconds_count', { pool: 'signing' }) - total(before, 'worker_pool_wait_seconds_count', { pool: 'signing' })
  const sum = total(after, 'worker_pool_wait_seconds_sum', { pool: 'signing' }) - total(before, 'worker_pool_wait_seconds_sum', { pool: 'signing' })
  t.equal(count, 3)
  t.ok(sum >= 0.03, `the two behind waited ~20 ms each at least (${sum} s)`)
  await t.rejects(gate.run(async () => { throw new Error('task failed') }), /task failed/, 'a failing task frees its slot')
  t.equal(await gate.run(async () => 'next'), 'next')
})

/** An ActorThreads over a plain JS worker (no shard): what its exits count. */
async function exitsOf(t: Test, source: string, heapMb?: number): Promise<void> {
  const dir = tempDir('actor-exits-')
  t.teardown(() => removeDir(dir))
  const workerFile = join(dir, 'worker.js')
  writeFileSync(workerFile, source)
  const threads = new ActorThreads(
    { workerFile, resourceLimits: heapMb === undefined ? undefined : { maxOldGenerationSizeMb: heapMb }, maxRestarts: 1, shardCount: 1, configs: [{ shards: [0] } as unknown as ActorConfig] },
    { eventsAppended: () => undefined, webhooksChanged: () => undefined, ownershipChanged: () => undefined, actorExited: () => undefined },
  )
  await t.rejects(threads.started(), /exited 2 times within 60 s/, 'an actor that keeps exiting is stopped')
}

t.test('shard_actor_exits_total: by reason and outcome', async (t) => {
  const before = await scrape()
  await exitsOf(t, 'throw new Error("boom")')
  await exitsOf(t, 'const kept = []; for (;;) kept.push(new Array(1e5).fill({}))', 16)
  await exitsOf(t, 'process.exit(3)')
  const after = await scrape()
  const moved = (reason: string, outcome: string): number =>
    total(after, 'shard_actor_exits_total', { reason, outcome }) - total(before, 'shard_actor_exits_total', { reason, outcome })
  // maxRestarts 1: the first exit restarts the thread, the second stops it.
  for (const reason of ['crashed', 'out_of_heap', 'exited']) {
    t.equal(moved(reason, 'restarted'), 1, `${reason}: restarted once`)
    t.equal(moved(reason, 'stopped'), 1, `${reason}: then stopped`)
  }
})
