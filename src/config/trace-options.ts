// Traces (OpenTelemetry): the standard OTEL_* variables that turn them on
// and say where spans go (docs/manual/operations.md, "Traces";
// docs/design/tracing.md). Off unless an OTLP endpoint or exporter is named:
// then nothing of OpenTelemetry is loaded. The variables the SDK reads
// itself (resource, sampler, batching, headers) are checked here only as far
// as a wrong value would otherwise be ignored silently.
import { TRACE_PROTOCOLS, type TraceOptions, type TraceProtocol } from '../telemetry/traces'
import { ConfigError } from './load-config'

export type { TraceOptions }

/** The variables this server reads or lets the SDK read, with their --help text; docs/manual/options.md lists them (src/config/options-doc.ts). */
export const TRACE_VARIABLES = {
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'traces: the OTLP/HTTP URL spans are sent to, as is (http://collector:4318/v1/traces); naming it turns traces on (default none: no traces, nothing of OpenTelemetry loaded)',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'traces: the OTLP/HTTP base URL (/v1/traces is appended); naming it turns traces on too',
  OTEL_TRACES_EXPORTER: 'traces: otlp (on, at OTLP\'s default http://localhost:4318/v1/traces unless an endpoint is named) or none (off whatever else is set) (default: on only when an endpoint is named)',
  OTEL_SDK_DISABLED: 'traces: true turns them off whatever else is set (default false)',
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'traces: http/protobuf or http/json (default OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf; grpc is not supported)',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'traces: the protocol when OTEL_EXPORTER_OTLP_TRACES_PROTOCOL is not set',
  OTEL_SERVICE_NAME: 'traces: the service.name of every span (default profile-graph)',
  OTEL_RESOURCE_ATTRIBUTES: 'traces: more resource attributes, key=value,key=value (percent-encoded)',
  OTEL_EXPORTER_OTLP_HEADERS: 'traces: headers sent with every export, key=value,key=value (an API key, say)',
  OTEL_TRACES_SAMPLER: 'traces: the sampler, as OpenTelemetry names them (default parentbased_always_on: a request whose traceparent is sampled is traced, and every other request)',
  OTEL_TRACES_SAMPLER_ARG: 'traces: the ratio of the traceidratio samplers, 0 to 1',
  OTEL_BSP_SCHEDULE_DELAY: 'traces: ms between two exports of a thread\'s finished spans (default 5000)',
} as const

export type TraceVariable = keyof typeof TRACE_VARIABLES

const EXPORTERS = ['otlp', 'none'] as const

/** A variable's value; empty counts as not set (the OpenTelemetry convention). */
function value(env: NodeJS.ProcessEnv, name: TraceVariable): string | undefined {
  const v = env[name]?.trim()
  return v === undefined || v === '' ? undefined : v
}

function endpoint(env: NodeJS.ProcessEnv, name: TraceVariable): string | undefined {
  const v = value(env, name)
  if (v !== undefined && !/^https?:\/\/[^/\s]+(\/\S*)?$/.test(v)) throw new ConfigError(`${name} must be an http(s) URL, got "${v}"`)
  return v
}

function boolean(env: NodeJS.ProcessEnv, name: TraceVariable): boolean {
  const v = value(env, name)?.toLowerCase()
  if (v === undefined || v === 'false') return false
  if (v === 'true') return true
  throw new ConfigError(`${name} must be true or false, got "${env[name] ?? ''}"`)
}

function protocol(env: NodeJS.ProcessEnv): TraceProtocol {
  const name: TraceVariable = value(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL'
  const v = value(env, name)
  if (v === undefined) return 'http/protobuf'
  if (!(TRACE_PROTOCOLS as readonly string[]).includes(v)) throw new ConfigError(`${name} must be one of ${TRACE_PROTOCOLS.join(', ')} (OTLP over HTTP), got "${v}"`)
  return v as TraceProtocol
}

/** The trace options from the environment, or undefined when traces are off (the default). */
export function traceOptions(env: NodeJS.ProcessEnv): TraceOptions | undefined {
  const exporter = value(env, 'OTEL_TRACES_EXPORTER')
  if (exporter !== undefined && !(EXPORTERS as readonly string[]).includes(exporter)) {
    throw new ConfigError(`OTEL_TRACES_EXPORTER must be one of ${EXPORTERS.join(', ')} (spans go over OTLP/HTTP or nowhere), got "${exporter}"`)
  }
  const named = endpoint(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? endpoint(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')
  const ratio = value(env, 'OTEL_TRACES_SAMPLER_ARG')
  if (ratio !== undefined && !(/^(0(\.\d+)?|1(\.0+)?)$/.test(ratio))) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${ratio}"`)
  const delay = value(env, 'OTEL_BSP_SCHEDULE_DELAY')
  if (delay !== undefined && !/^\d{1,9}$/.test(delay)) throw new ConfigError(`OTEL_BSP_SCHEDULE_DELAY must be a whole number of milliseconds, got "${delay}"`)
  const options = { protocol: protocol(env) }
  if (boolean(env, 'OTEL_SDK_DISABLED') || exporter === 'none') return undefined
  return exporter === 'otlp' || named !== undefined ? options : undefined
}
