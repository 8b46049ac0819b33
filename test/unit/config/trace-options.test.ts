// The OTEL_* variables that turn traces on (src/config/trace-options.ts):
// off unless an OTLP endpoint or exporter is named, off whatever else is set
// when disabled, and a value the server cannot honour refuses the start.
import t from 'tap'
import { ConfigError, loadConfig, loadToolConfig, usage } from '../../../src/config/load-config'
import { TRACE_VARIABLES } from '../../../src/config/trace-options'

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }

function configError(t: tap.Test, env: NodeJS.ProcessEnv, pattern: RegExp): void {
  const err = t.throws(() => loadConfig([], env)) as Error
  t.ok(err instanceof ConfigError, 'a ConfigError')
  t.match(err.message, pattern)
}

t.test('off by default, and with only the variables that do not name where spans go', async (t) => {
  t.equal(loadConfig([], {}).traces, undefined)
  t.equal(loadConfig([], { OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' }).traces, undefined)
  t.equal(loadConfig([], { OTEL_EXPORTER_OTLP_ENDPOINT: '' }).traces, undefined, 'empty is not set')
})

t.test('an endpoint, or OTEL_TRACES_EXPORTER=otlp, turns them on; protobuf unless JSON is asked for', async (t) => {
  t.same(loadConfig([], ENDPOINT).traces, { protocol: 'http/protobuf' })
  t.same(loadConfig([], { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c.example/v1/traces' }).traces, { protocol: 'http/protobuf' })
  t.same(loadConfig([], { OTEL_TRACES_EXPORTER: 'otlp' }).traces, { protocol: 'http/protobuf' }, 'at OTLP\'s default endpoint')
  t.same(loadConfig([], { ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).traces, { protocol: 'http/json' })
  t.same(loadConfig([], { ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).traces, { protocol: 'http/protobuf' }, 'the traces\' own protocol wins')
})

t.test('OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true keep them off whatever else is set', async (t) => {
  t.equal(loadConfig([], { ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }).traces, undefined)
  t.equal(loadConfig([], { ...ENDPOINT, OTEL_SDK_DISABLED: 'true' }).traces, undefined)
  t.equal(loadConfig([], { ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' }).traces, undefined)
  t.same(loadConfig([], { ...ENDPOINT, OTEL_SDK_DISABLED: 'false' }).traces, { protocol: 'http/protobuf' })
})

t.test('values the server cannot honour refuse the start', async (t) => {
  configError(t, { OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER must be one of otlp, none .*got "zipkin"/)
  configError(t, { ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL must be one of http\/protobuf, http\/json/)
  configError(t, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http\(s\) URL/)
  configError(t, { ...ENDPOINT, OTEL_SDK_DISABLED: 'yes' }, /OTEL_SDK_DISABLED must be true or false/)
  configError(t, { ...ENDPOINT, OTEL_TRACES_SAMPLER_ARG: '1.5' }, /OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1/)
  configError(t, { ...ENDPOINT, OTEL_BSP_SCHEDULE_DELAY: '5s' }, /OTEL_BSP_SCHEDULE_DELAY must be a whole number of milliseconds/)
  t.same(loadConfig([], { ...ENDPOINT, OTEL_TRACES_SAMPLER_ARG: '0.25' }).traces, { protocol: 'http/protobuf' })
})

t.test('the commands never trace; --help lists every variable', async (t) => {
  t.equal(loadToolConfig([], ENDPOINT).traces, undefined)
  const help = usage('main.js')
  for (const name of Object.keys(TRACE_VARIABLES)) t.match(help, name)
  t.notMatch(usage('backup.js', true), 'OTEL_', 'not the commands\' help')
})
