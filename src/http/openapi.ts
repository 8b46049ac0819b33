// The OpenAPI 3.1 document of route tables: every pattern and method, its
// path, query and body schemas, its scope, and the error shape
// (src/core/errors.ts). Built from the same declarations the router runs
// (src/http/router.ts), so it lists exactly the routes there are.
import { Kind, Type, type TSchema } from '@sinclair/typebox'
import { ERRORS, type ErrorType } from '../core/errors'
import { MEDIA } from './media-type'
import type { Answer, Answers, AnswerSpec, Method, RouteMethod, RouteTable } from './route'

/** One service: its prefix (with {captures}), the prefix's parameters, and its routes. */
export interface ApiService {
  tag: string
  prefix: string
  prefixParams: Record<string, TSchema>
  routes: RouteTable<never, never>
  /** Error types every route of the service may answer (its prefix's checks, a full queue, a bug). */
  errors: readonly ErrorType[]
}

/** A route outside the services (GET /errors, GET /openapi.json). */
export interface ApiExtra {
  path: string
  method: Method
  summary: string
  /** The 200 answer: its JSON body's schema, or an AnswerSpec (another media type). */
  response: Answer
  /** Answers besides 200 (a probe's 503 with its own body). */
  answers?: Answers
  /** Error types it answers with the shared error body. */
  errors?: readonly ErrorType[]
  /** Path parameters ({name} in `path`), each a string. */
  pathParams?: readonly string[]
  /** How the route authenticates, when it does (the default: no token). */
  security?: readonly Record<string, string[]>[]
}

export const ERROR_SCHEMA = Type.Object({
  status: Type.Integer({ description: 'the HTTP status' }),
  message: Type.String({ description: 'what went wrong, for a person' }),
  type: Type.Union((Object.keys(ERRORS) as ErrorType[]).map((t) => Type.Literal(t)), { description: 'one of GET /errors' }),
  moreInfo: Type.String({ description: 'where the type is explained' }),
  error: Type.Optional(Type.String({ description: 'OAuth endpoints: the RFC 6749 error code' })),
  error_description: Type.Optional(Type.String({ description: 'OAuth endpoints: the RFC 6749 error description' })),
}, {
  example: { status: 404, message: 'no route for GET /graph/v1/t1/nothing', type: 'element_not_found', moreInfo: 'https://graph.example.com/errors#element_not_found' },
})


/** A schema as plain JSON (TypeBox marks its objects with symbols). */
const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>

function withExample(schema: TSchema): Record<string, unknown> {
  const json = plain(schema)
  return json.example === undefined ? { schema: json } : { schema: json, example: json.example }
}

const properties = (schema: TSchema | undefined): [string, TSchema][] =>
  Object.entries((schema as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {})

function parameters(prefixParams: Record<string, TSchema>, pattern: string, spec: RouteMethod<never, never>): unknown[] {
  const declared = new Map(properties(spec.params))
  const path = [...pattern.matchAll(/:([^/]+)/g)].map((m) => m[1]!)
  const query = spec.query ?? spec.documentedQuery
  const required = new Set((query as { required?: string[] } | undefined)?.required ?? [])
  const requiredHeaders = new Set(spec.headers?.required ?? [])
  return [
    ...Object.entries(prefixParams).map(([name, schema]) => ({ name, in: 'path', required: true, schema: plain(schema) })),
    ...path.map((name) => ({ name, in: 'path', required: true, schema: plain(declared.get(name) ?? Type.String()) })),
    ...properties(query).map(([name, schema]) => ({ name, in: 'query', required: required.has(name), ...withExample(schema) })),
    ...properties(spec.headers).map(([name, schema]) => ({ name, in: 'header', required: requiredHeaders.has(name), ...withExample(schema) })),
  ]
}

function security(spec: RouteMethod<never, never>): Record<string, string[]>[] | undefined {
  if (spec.scope !== undefined) return [{ bearer: [spec.scope] }]
  if (spec.authenticates === 'bearer') return [{ bearer: [] }]
  // Confidential clients authenticate with HTTP Basic (or the form); public clients send only client_id.
  if (spec.authenticates === 'client') return [{ clientBasic: [] }, {}]
  return []
}

function requestBody(spec: RouteMethod<never, never>): unknown {
  if (spec.body === 'none') return undefined
  const schema = spec.json ?? spec.documented
  const fallback = spec.body === 'json' ? Type.Unknown() : Type.Record(Type.String(), Type.String())
  return { required: true, content: { [MEDIA[spec.body]]: withExample(schema ?? fallback) } }
}

const isSchema = (answer: Answer): answer is TSchema => Kind in answer

const headerObjects = (headers: Readonly<Record<string, TSchema>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(headers).map(([name, schema]) => [name, { required: true, schema: plain(schema) }]))

function response(answer: Answer): Record<string, unknown> {
  const spec: AnswerSpec = isSchema(answer) ? { content: { 'application/json': answer } } : answer
  const out: Record<string, unknown> = { description: spec.description ?? 'Success' }
  if (spec.content !== undefined) {
    out.content = Object.fromEntries(Object.entries(spec.content).map(([media, schema]) => [media, withExample(schema)]))
  }
  if (spec.headers !== undefined) out.headers = headerObjects(spec.headers)
  return out
}

function successes(answers: Answers): Record<string, unknown> {
  return Object.fromEntries(Object.entries(answers).flatMap(([status, answer]) => (answer === undefined ? [] : [[status, response(answer)]])))
}

/** The errors a declaration implies: its authentication, its input, its body's media type and size. */
function impliedErrors(spec: RouteMethod<never, never>): ErrorType[] {
  const types: ErrorType[] = []
  if (spec.scope !== undefined) types.push('insufficient_credentials', 'insufficient_scope')
  else if (spec.authenticates !== undefined) types.push('insufficient_credentials')
  if (spec.params !== undefined || spec.query !== undefined || spec.json !== undefined) types.push('bad_request')
  if (spec.body !== 'none') types.push('bad_request', 'payload_too_large', 'unsupported_media_type')
  return types
}

/** Waits the client is told about (src/http/exchange.ts sets Retry-After on these). */
const RETRY_AFTER = new Set([429, 503, 507])

/** One response per error status, naming the types that answer with it; the body is always the shared error shape. */
function failures(types: readonly ErrorType[], pages: boolean): Record<string, unknown> {
  const byStatus = new Map<number, Set<ErrorType>>()
  for (const type of types) {
    const status = ERRORS[type].status
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(type))
  }
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, named]) => [String(status), {
    description: `Error: ${[...named].join(', ')} (GET /errors)`,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } }, ...(pages ? { 'text/html': { schema: { type: 'string' } } } : {}) },
    ...(RETRY_AFTER.has(status) ? { headers: headerObjects({ 'retry-after': Type.String({ description: 'seconds to wait' }) }) } : {}),
  }]))
}

const operationId = (method: string, path: string): string =>
  `${method.toLowerCase()}${path.replace(/[{}.]/g, '').split(/[/_-]/).map((w) => (w === '' ? '' : w[0]!.toUpperCase() + w.slice(1))).join('')}`

function operation(service: ApiService, pattern: string, method: Method, spec: RouteMethod<never, never>): Record<string, unknown> {
  const path = `${service.prefix}/${pattern.replace(/:([^/]+)/g, '{$1}')}`
  const op: Record<string, unknown> = {
    operationId: operationId(method, path),
    tags: [service.tag],
    summary: spec.summary ?? `${method} ${path}`,
    parameters: parameters(service.prefixParams, pattern, spec),
    security: security(spec),
    responses: { ...successes(spec.answers), ...failures([...service.errors, ...impliedErrors(spec), ...(spec.errors ?? [])], spec.errorPages === true) },
  }
  const body = requestBody(spec)
  if (body !== undefined) op.requestBody = body
  return op
}

/** Every route of the services, as `METHOD /path` (what the document must list). */
export function routeKeys(services: readonly ApiService[]): string[] {
  return services.flatMap((s) => s.routes.flatMap(([pattern, methods]) =>
    Object.keys(methods).map((m) => `${m} ${s.prefix}/${pattern.replace(/:([^/]+)/g, '{$1}')}`)))
}

export function openApiDocument(info: { title: string; version: string; description: string }, serverUrl: string, services: readonly ApiService[], extras: readonly ApiExtra[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const service of services) {
    for (const [pattern, methods] of service.routes) {
      const path = `${service.prefix}/${pattern.replace(/:([^/]+)/g, '{$1}')}`
      const item = (paths[path] ??= {})
      for (const [method, spec] of Object.entries(methods) as [Method, RouteMethod<never, never>][]) {
        item[method.toLowerCase()] = operation(service, pattern, method, spec)
      }
    }
  }
  for (const extra of extras) {
    (paths[extra.path] ??= {})[extra.method.toLowerCase()] = {
      operationId: operationId(extra.method, extra.path),
      summary: extra.summary,
      ...(extra.pathParams === undefined ? {} : { parameters: extra.pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })) }),
      security: extra.security ?? [],
      responses: { ...successes({ 200: extra.response, ...extra.answers }), ...failures(extra.errors ?? [], false) },
    }
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: serverUrl }],
    tags: services.map((s) => ({ name: s.tag })),
    paths,
    components: {
      schemas: { Error: plain(ERROR_SCHEMA) },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An access token of the token endpoint; the operation lists the scope it needs.' },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_id and client_secret (RFC 6749 section 2.3.1).' },
      },
    },
  }
}
