// The operator's endpoints, outside the API's route tables: GET
// /health/live, GET /health/ready (no token; for Kubernetes' probes) and
// GET /metrics (Prometheus text; open, off or behind scope platform.metrics).
// They answer while the server starts too.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import { requireScope } from '../auth/helpers/bearer'
import type { AccessTokens } from '../auth/models/access-tokens'
import type { MetricsAccess } from '../config/load-config'
import { ApiError } from '../core/errors'
import { Exchange } from '../http/exchange'
import { registry } from '../telemetry/metrics'
import { failing, starting, type Checks } from './health'

export const METRICS_SCOPE = 'platform.metrics'
export const OPERATIONS_PATHS = ['/health/live', '/health/ready', '/metrics'] as const

export interface OperationsServices {
  /** The readiness checks of the running server (src/operations/health.ts). */
  readiness: () => Checks
  metrics: MetricsAccess
}

interface Started {
  publicUrl: string
  tokens: AccessTokens
  operations: OperationsServices
}

function ready(ex: Exchange, s: Started | undefined): void {
  const checks = s === undefined ? starting() : s.operations.readiness()
  const bad = failing(checks)
  ex.json(bad.length === 0 ? 200 : 503, JSON.stringify(bad.length === 0 ? { status: 'ready', checks } : { status: 'not ready', failing: bad, checks }))
}

function metrics(ex: Exchange, s: Started | undefined): void {
  if (s === undefined) throw new ApiError('service_unavailable', 'the server is starting')
  if (s.operations.metrics === 'off') throw new ApiError('element_not_found', 'metrics are off (--metrics off)')
  if (s.operations.metrics === 'token') requireScope(s.tokens, ex.headers.authorization, METRICS_SCOPE)
  registry.metrics().then((text) => ex.send(200, registry.contentType, text), (err: unknown) => ex.error(err))
}

export function operationsEndpoint(s: Started | undefined, path: (typeof OPERATIONS_PATHS)[number], res: HttpResponse, req: HttpRequest): void {
  const ex = new Exchange(res, req, s?.publicUrl ?? '')
  ex.route = path
  try {
    if (ex.method !== 'GET' && ex.method !== 'HEAD') throw new ApiError('method_not_allowed', `${ex.method} is not allowed here; allowed: GET, HEAD`, { headers: { allow: 'GET, HEAD' } })
    if (path === '/health/live') ex.json(200, '{"status":"live"}')
    else if (path === '/health/ready') ready(ex, s)
    else metrics(ex, s)
  } catch (err) {
    ex.error(err)
  }
}
