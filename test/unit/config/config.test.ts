import t from 'tap'
import { availableParallelism } from 'node:os'
import { basename, dirname, resolve } from 'node:path'
import { ConfigError, isDemoBootstrap, loadConfig, loadToolConfig, parseDurationMs, usage, wantsHelp } from '../../../src/config/load-config'

function configError(t: tap.Test, fn: () => unknown, pattern: RegExp): void {
  const err = t.throws(fn) as Error
  t.ok(err instanceof ConfigError, 'a ConfigError')
  t.match(err.message, pattern)
}

t.test('defaults with no flags and an empty environment', async (t) => {
  const c = loadConfig([], {})
  t.equal(c.port, 8080)
  t.equal(c.host, '127.0.0.1')
  t.equal(c.dataDir, resolve('./data'))
  t.equal(c.workers, Math.min(2, availableParallelism()))
  t.equal(c.actorHeapMb, 192, 'each actor thread\'s V8 old generation is capped')
  t.equal(c.heapGrowthPercent, 30, 'every thread\'s heap grows at most 30% past what is live before V8 collects')
  t.equal(c.shards, 4)
  t.equal(c.maxBody, 1024 * 1024)
  t.equal(c.masterKeyFile, resolve('./secrets/master.key'))
  t.equal(c.accessTokenTtl, 3600)
  t.equal(c.eventRetentionMs, 7 * 86_400_000)
  t.equal(c.maxJsonDepth, 64)
  t.equal(c.maxJsonElements, 100_000)
  t.equal(c.maxStreamBufferMb, 64, 'streamed answers may hold 64 MB for slow readers in all')
  t.equal(c.publicUrl, undefined)
  t.same(c.webhookAllow, [], 'webhooks reach public addresses only')
  t.same(c.trustProxy, [], 'no proxy is believed')
  t.equal(basename(c.bootstrap ?? ''), 'demo.json', 'the demo bootstrap by default')
  t.equal(basename(dirname(c.bootstrap ?? '')), 'bootstrap')
})

t.test('environment variables set every option', async (t) => {
  const c = loadConfig([], {
    PORT: '9000', HOST: '0.0.0.0', DATA_DIR: '/tmp/x', BOOTSTRAP: 'b.json', WORKERS: '3', ACTOR_HEAP_MB: '512', HEAP_GROWTH_PERCENT: '50', SHARDS: '16',
    MAX_BODY: '2048', MASTER_KEY_FILE: 'k/master.key', ACCESS_TOKEN_TTL: '60', EVENT_RETENTION: '12h',
    EVENT_RETENTION_COUNT: '5000', MAX_STREAMS_PER_TENANT: '7', MAX_STREAM_BUFFER_MB: '32', PUBLIC_URL: 'https://graph.example.com',
    MAX_JSON_DEPTH: '10', MAX_JSON_ELEMENTS: '500', WEBHOOK_RETRY_BASE_MS: '50',
    METRICS: 'token', LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW: '127.0.0.1, hooks.internal,*.corp.example,10.0.0.0/8,fd00::/8', TRUST_PROXY: '10.0.0.1,::1',
    CORS_ORIGINS: 'https://app.example',
    GATEWAY_TIMEOUT: '5s', GATEWAY_MAX_CONCURRENT: '9',
    SHRED_LOG_FILE: 's/shred.log',
  })
  t.same(c, {
    port: 9000, host: '0.0.0.0', dataDir: '/tmp/x', bootstrap: resolve('b.json'), workers: 3, actorHeapMb: 512, heapGrowthPercent: 50, shards: 16,
    maxBody: 2048, maxJsonDepth: 10, maxJsonElements: 500, masterKeyFile: resolve('k/master.key'), accessTokenTtl: 60, eventRetentionMs: 12 * 3_600_000,
    eventRetentionCount: 5000, maxStreamsPerTenant: 7, maxStreamBufferMb: 32, publicUrl: 'https://graph.example.com',
    webhookAllow: ['127.0.0.1', 'hooks.internal', '*.corp.example', '10.0.0.0/8', 'fd00::/8'], trustProxy: ['10.0.0.1', '::1'], shutdownTimeoutMs: 10_000,
    webhookRetryBaseMs: 50,
    corsOrigins: ['https://app.example'],
    gatewayTimeoutMs: 5000, gatewayMaxConcurrent: 9,
    shredLog: resolve('s/shred.log'),
    metrics: 'token', logLevel: 'warn',
  })
})

t.test('the shred log is beside the master key unless named', async (t) => {
  t.equal(loadConfig([], { MASTER_KEY_FILE: 'k/master.key' }).shredLog, resolve('k/shred.log'))
  t.equal(loadConfig(['--master-key-file', '/keys/m.key'], {}).shredLog, '/keys/shred.log')
  t.equal(loadConfig(['--shred-log', '/logs/s.log'], {}).shredLog, '/logs/s.log')
})

t.test('flags win over the environment', async (t) => {
  const env = { PORT: '9000', HOST: 'h-env', WORKERS: '3', PUBLIC_URL: 'http://env.example' }
  const c = loadConfig(['--port', '9100', '--host', 'h-flag', '--public-url', 'http://flag.example'], env)
  t.equal(c.port, 9100)
  t.equal(c.host, 'h-flag')
  t.equal(c.publicUrl, 'http://flag.example')
  t.equal(c.workers, 3, 'an option without a flag still comes from the environment')
})

t.test('--flag=value form, including = inside the value', async (t) => {
  const c = loadConfig(['--port=0', '--shards=8', '--public-url=http://h:1/base?a=b', '--event-retention=30m'], {})
  t.equal(c.port, 0)
  t.equal(c.shards, 8)
  t.equal(c.publicUrl, 'http://h:1/base?a=b')
  t.equal(c.eventRetentionMs, 30 * 60_000)
})

t.test('an empty bootstrap means none; a later flag repeats win', async (t) => {
  t.equal(loadConfig(['--bootstrap='], {}).bootstrap, undefined)
  t.equal(loadConfig([], { BOOTSTRAP: '' }).bootstrap, undefined)
  t.equal(loadConfig(['--bootstrap', 'x.json'], {}).bootstrap, resolve('x.json'))
  t.equal(loadConfig(['--port', '1', '--port', '2'], {}).port, 2)
})

t.test('PUBLIC_URL loses its trailing slashes', async (t) => {
  t.equal(loadConfig([], { PUBLIC_URL: 'https://example.com/' }).publicUrl, 'https://example.com')
  t.equal(loadConfig([], { PUBLIC_URL: 'https://example.com/api//' }).publicUrl, 'https://example.com/api')
})

t.test('bad PUBLIC_URL', async (t) => {
  configError(t, () => loadConfig([], { PUBLIC_URL: 'example.com' }), /PUBLIC_URL must be an http\(s\) URL, got "example.com"/)
  configError(t, () => loadConfig([], { PUBLIC_URL: 'ftp://example.com' }), /PUBLIC_URL/)
  configError(t, () => loadConfig([], { PUBLIC_URL: 'http://' }), /PUBLIC_URL/)
  configError(t, () => loadConfig(['--public-url', 'localhost:8080'], {}), /PUBLIC_URL/)
})

t.test('bad port', async (t) => {
  configError(t, () => loadConfig(['--port', '65536'], {}), /--port must be between 0 and 65535, got 65536/)
  configError(t, () => loadConfig(['--port', 'abc'], {}), /--port must be a whole number, got "abc"/)
  configError(t, () => loadConfig(['--port', '-1'], {}), /--port must be a whole number/)
  configError(t, () => loadConfig(['--port', '80.5'], {}), /whole number/)
  configError(t, () => loadConfig([], { PORT: '99999' }), /between 0 and 65535/)
  configError(t, () => loadConfig(['--port='], {}), /whole number, got ""/)
})

t.test('other numeric ranges', async (t) => {
  configError(t, () => loadConfig(['--workers', '0'], {}), /--workers must be between 1 and 64/)
  configError(t, () => loadConfig(['--workers', '65'], {}), /--workers/)
  configError(t, () => loadConfig(['--shards', '257'], {}), /--shards must be between 1 and 256/)
  configError(t, () => loadConfig(['--actor-heap-mb', '63'], {}), /--actor-heap-mb must be between 64 and 1048576, got 63/)
  configError(t, () => loadConfig([], { ACTOR_HEAP_MB: '1e3' }), /--actor-heap-mb must be a whole number/)
  t.equal(loadConfig(['--actor-heap-mb', '64'], {}).actorHeapMb, 64)
  t.equal(loadConfig(['--heap-growth-percent', '0'], {}).heapGrowthPercent, 0, '0 leaves V8 its own factor')
  configError(t, () => loadConfig(['--heap-growth-percent', '401'], {}), /--heap-growth-percent must be between 0 and 400, got 401/)
  configError(t, () => loadConfig([], { HEAP_GROWTH_PERCENT: '-1' }), /--heap-growth-percent/)
  configError(t, () => loadConfig(['--max-body', '0'], {}), /--max-body/)
  configError(t, () => loadConfig(['--max-stream-buffer-mb', '0'], {}), /MAX_STREAM_BUFFER_MB must be between 1 and 1048576, got 0/)
  configError(t, () => loadConfig([], { MAX_STREAM_BUFFER_MB: '64MB' }), /MAX_STREAM_BUFFER_MB must be a whole number/)
  configError(t, () => loadConfig([], { ACCESS_TOKEN_TTL: '0' }), /ACCESS_TOKEN_TTL/)
  t.equal(loadConfig(['--workers', '64', '--shards', '256'], {}).shards, 256, 'the bounds themselves are accepted')
})

t.test('unknown option and positional arguments', async (t) => {
  configError(t, () => loadConfig(['--nope', '1'], {}), /unknown option --nope/)
  configError(t, () => loadConfig(['--nope=1'], {}), /unknown option --nope$/)
  configError(t, () => loadConfig(['serve'], {}), /unknown option serve/)
  configError(t, () => loadConfig(['-p', '80'], {}), /unknown option -p/)
  configError(t, () => loadConfig(['--access-token-ttl', '5', '--PORT', '1'], {}), /unknown option --PORT/)
})

t.test('missing value', async (t) => {
  configError(t, () => loadConfig(['--port'], {}), /option --port needs a value/)
  configError(t, () => loadConfig(['--host', 'x', '--data-dir'], {}), /option --data-dir needs a value/)
})

t.test('EVENT_RETENTION durations', async (t) => {
  t.equal(loadConfig([], { EVENT_RETENTION: '604800' }).eventRetentionMs, 604_800_000, 'a bare number is seconds')
  t.equal(loadConfig([], { EVENT_RETENTION: '7d' }).eventRetentionMs, 604_800_000)
  t.equal(loadConfig([], { EVENT_RETENTION: '500ms' }).eventRetentionMs, 500)
  configError(t, () => loadConfig([], { EVENT_RETENTION: '1w' }), /EVENT_RETENTION must be seconds or a number with ms, s, m, h or d, got "1w"/)
})

t.test('parseDurationMs units and errors', async (t) => {
  t.equal(parseDurationMs('X', '0'), 0)
  t.equal(parseDurationMs('X', '10'), 10_000)
  t.equal(parseDurationMs('X', '10s'), 10_000)
  t.equal(parseDurationMs('X', '250ms'), 250)
  t.equal(parseDurationMs('X', '30m'), 1_800_000)
  t.equal(parseDurationMs('X', '12h'), 43_200_000)
  t.equal(parseDurationMs('X', '2d'), 172_800_000)
  t.equal(parseDurationMs('X', ' 3h '), 10_800_000, 'surrounding white space is ignored')
  for (const bad of ['', 'd', '1.5h', '-1s', '7 d', '7D', 'P7D', '1h30m']) {
    configError(t, () => parseDurationMs('X', bad), new RegExp(`^X must be seconds .*got "${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"$`))
  }
})

t.test('allow-lists: bad entries are refused with the entry named', async (t) => {
  configError(t, () => loadConfig(['--webhook-allow', '10.0.0.0/33'], {}), /WEBHOOK_ALLOW: "10.0.0.0\/33" is not a valid IP/)
  configError(t, () => loadConfig([], { WEBHOOK_ALLOW: 'http://x.example' }), /WEBHOOK_ALLOW: "http:\/\/x.example"/)
  configError(t, () => loadConfig(['--trust-proxy', 'proxy.example'], {}), /TRUST_PROXY: "proxy.example" is not an IP address or CIDR range/)
  t.same(loadConfig(['--trust-proxy=10.0.0.0/8,192.168.1.1'], {}).trustProxy, ['10.0.0.0/8', '192.168.1.1'])
})

t.test('the tools take how to reach the running server; the server refuses those flags', async (t) => {
  configError(t, () => loadConfig(['--server-url', 'http://127.0.0.1:1'], {}), /unknown option --server-url/)
  const c = loadToolConfig(['--server-url', 'http://127.0.0.1:1/', '--admin-client-id', 'a', '--data-dir', '/tmp/d'], { ADMIN_CLIENT_SECRET: 's' })
  t.equal(c.serverUrl, 'http://127.0.0.1:1')
  t.equal(c.adminClientId, 'a')
  t.equal(c.adminClientSecret, 's')
  t.equal(c.dataDir, '/tmp/d')
  configError(t, () => loadToolConfig(['--server-url', 'localhost:1'], {}), /SERVER_URL must be an http\(s\) URL/)
})

t.test('a switch (--operations) takes no value: the flag alone is true, the variable true or false', async (t) => {
  t.equal(loadToolConfig([], {}).operations, false)
  const c = loadToolConfig(['--operations', '--tenant', 'demo'], {})
  t.equal(c.operations, true)
  t.equal(c.tenant, 'demo', 'the next argument is not its value')
  t.equal(loadToolConfig(['--tenant', 'demo', '--operations'], {}).operations, true, 'last, too')
  t.equal(loadToolConfig([], { IMPORT_OPERATIONS: 'true' }).operations, true)
  t.equal(loadToolConfig(['--operations=false'], { IMPORT_OPERATIONS: 'true' }).operations, false, 'the flag wins')
  configError(t, () => loadToolConfig([], { IMPORT_OPERATIONS: 'yes' }), /IMPORT_OPERATIONS must be true or false, got "yes"/)
  configError(t, () => loadConfig(['--operations'], {}), /unknown option --operations/)
  t.match(usage('tool', true), /^ {2}--operations {2,}IMPORT_OPERATIONS /m, 'its usage line has no <value>')
})

t.test('--help: usage generated from the options table', async (t) => {
  t.ok(wantsHelp(['--port', '1', '--help']))
  t.notOk(wantsHelp(['--port', '1']))
  const server = usage('main')
  for (const flag of ['--port', '--data-dir', '--public-url', '--shutdown-timeout', 'PUBLIC_URL']) t.match(server, flag)
  t.notMatch(server, '--server-url', 'the tool-only options are not the server\'s')
  t.match(usage('tool', true), '--admin-client-secret')
})

t.test('--help: every option says what it does', async (t) => {
  for (const text of [usage('main'), usage('tool', true)]) {
    const options = text.split('\n').filter((l) => l.startsWith('  --') && !l.startsWith('  --help'))
    t.ok(options.length > 30, 'the options are listed')
    for (const line of options) {
      const [, flag, description] = /^ {2}(--[a-z0-9-]+)(?: <value>)?\s+[A-Z0-9_]+\s*(.*)$/.exec(line) ?? []
      t.ok(flag, `an option line: ${line}`)
      t.ok((description ?? '').length >= 10, `${flag ?? line} has a description`)
    }
  }
})

t.test('SHUTDOWN_TIMEOUT is a duration', async (t) => {
  t.equal(loadConfig(['--shutdown-timeout', '3s'], {}).shutdownTimeoutMs, 3000)
  t.equal(loadConfig([], { SHUTDOWN_TIMEOUT: '500ms' }).shutdownTimeoutMs, 500)
})

t.test('WEBHOOK_RETRY_BASE_MS is an option of the loader: flag, variable, default, checked', async (t) => {
  t.equal(loadConfig([], {}).webhookRetryBaseMs, 1000)
  t.equal(loadConfig([], { WEBHOOK_RETRY_BASE_MS: '' }).webhookRetryBaseMs, 1000, 'empty is the default')
  t.equal(loadConfig([], { WEBHOOK_RETRY_BASE_MS: '50' }).webhookRetryBaseMs, 50)
  t.equal(loadConfig(['--webhook-retry-base-ms', '20'], { WEBHOOK_RETRY_BASE_MS: '50' }).webhookRetryBaseMs, 20)
  for (const bad of ['0', '-1', '1.5', 'x', '1234567890']) {
    configError(t, () => loadConfig([], { WEBHOOK_RETRY_BASE_MS: bad }), /^WEBHOOK_RETRY_BASE_MS must be a whole number of milliseconds ≥ 1/)
  }
  t.match(usage('main'), '--webhook-retry-base-ms')
})

t.test('only the shipped demo bootstrap is the demo', async (t) => {
  t.ok(isDemoBootstrap(loadConfig([], {}).bootstrap))
  t.notOk(isDemoBootstrap(loadConfig(['--bootstrap', 'my.json'], {}).bootstrap))
  t.notOk(isDemoBootstrap(undefined))
})
