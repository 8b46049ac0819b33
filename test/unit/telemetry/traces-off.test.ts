// With traces off, nothing of OpenTelemetry's SDK or exporters is loaded by
// the server's modules (the hot paths included), and starting traces
// without options leaves them off; with options the SDK loads and a span
// can be made. Each case runs the compiled modules in a node process of its
// own, so this test's process loads nothing of them.
import t from 'tap'
import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { OtlpReceiver } from '../../helpers/otlp-receiver'
import { ROOT } from '../../helpers/server'

/** Runs `script` in a fresh node in the repository's root and returns what it printed, parsed. */
function inNode<T>(script: string): T {
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as T
}

const LOADED = `Object.keys(require.cache).filter((k) => /@opentelemetry[\\\\/](sdk-|exporter-|resources|core)|traces-sdk/.test(k))`

t.test('off: the front thread\'s and the actor\'s modules load no SDK, exporter or resource module', async (t) => {
  const loaded = inNode<{ files: string[]; traces: boolean }>(`
    require('./dist/src/app/dispatch'); require('./dist/src/shards/actor-pool'); require('./dist/workers/actor/group-commit'); require('./dist/src/contract/codec')
    const traces = require('./dist/src/telemetry/traces')
    traces.startTraces(undefined, 'front', () => undefined).then(() => {
      console.log(JSON.stringify({ files: ${LOADED}, traces: traces.traces !== undefined }))
    })
  `)
  t.same(loaded.files, [])
  t.equal(loaded.traces, false, 'startTraces without options leaves traces off')
})

t.test('on: the SDK loads and makes spans with a parent from a traceparent', async (t) => {
  const on = inNode<{ loaded: number; parent: string; traceparent: string }>(`
    const traces = require('./dist/src/telemetry/traces')
    traces.startTraces({ protocol: 'http/json' }, 'front', () => undefined).then(() => {
      const tr = traces.traces
      const span = tr.start('x', 'internal', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')
      const c = span.spanContext()
      const out = { loaded: ${LOADED}.length, parent: c.traceId, traceparent: tr.traceparent(span) }
      console.log(JSON.stringify(out))
      // No collector listens: nothing is exported.
      process.exit(0)
    })
  `)
  t.ok(on.loaded > 0, 'the SDK is loaded')
  t.equal(on.parent, '0af7651916cd43dd8448eb211c80319c', 'the span is in the traceparent\'s trace')
  t.match(on.traceparent, /^00-0af7651916cd43dd8448eb211c80319c-[\da-f]{16}-01$/)
})

t.test('http/protobuf (the default protocol) sends protobuf; http/json, JSON', async (t) => {
  const receiver = new OtlpReceiver()
  await receiver.start()
  t.teardown(() => receiver.stop())
  const script = (protocol: string): string => `
    const traces = require('./dist/src/telemetry/traces')
    traces.startTraces({ protocol: '${protocol}' }, 'front', () => undefined).then(async () => {
      traces.traces.end(traces.traces.start('one', 'internal', undefined))
      await traces.stopTraces()
    })
  `
  // Asynchronously: the receiver in this process must answer meanwhile.
  const run = (protocol: string) => promisify(execFile)(process.execPath, ['-e', script(protocol)], { cwd: ROOT, env: { ...process.env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url } })
  await run('http/protobuf')
  t.same(receiver.contentTypes, ['application/x-protobuf'])
  await run('http/json')
  t.same(receiver.contentTypes, ['application/x-protobuf', 'application/json'])
  t.same(receiver.spans.map((s) => s.name), ['one'], 'the JSON export read back')
})
