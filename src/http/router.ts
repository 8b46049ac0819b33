// The one pattern router of both services. A pattern is segments after the
// service's prefix: literal ones match exactly, ":name" captures one
// (percent-decoded) segment. Patterns are tried in table order among those
// with as many segments as the path; the first match wins. Each method's
// schemas are compiled once, here, at start-up.
import type { TSchema } from '@sinclair/typebox'
import type { Method, RouteMethod, RouteMethods, RouteTable } from './route'
import type { SchemaCompiler, Validate } from './schemas'

/** A route method with its compiled validators. */
export interface CompiledMethod<S, C> {
  spec: RouteMethod<S, C>
  params: Validate | undefined
  query: Validate | undefined
  json: Validate | undefined
}

export interface CompiledRoute<S, C> {
  pattern: string
  /** A literal segment, or undefined where the pattern captures. */
  parts: readonly (string | undefined)[]
  names: readonly string[]
  methods: Partial<Record<Method, CompiledMethod<S, C>>>
  /** The Allow header of a 405: the methods in table order. */
  allow: string
}

export interface Match<S, C> {
  route: CompiledRoute<S, C>
  params: Record<string, string>
}

export interface RouterOptions {
  /** Whether ":name" matches an empty segment (the graph's handlers name it in a 400; OAuth ids never are). */
  emptyCaptures: boolean
  /** Run on every captured segment once the pattern matches, before the method is looked at. */
  checkCapture?: (segment: string) => void
}

function propertyNames(schema: TSchema | undefined): string[] | undefined {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties
  return properties === undefined ? undefined : Object.keys(properties)
}

function compileRoute<S, C>(pattern: string, methods: RouteMethods<S, C>, schemas: SchemaCompiler): CompiledRoute<S, C> {
  const segments = pattern.split('/')
  const names = segments.filter((s) => s.startsWith(':')).map((s) => s.slice(1))
  const compiled: Partial<Record<Method, CompiledMethod<S, C>>> = {}
  for (const [method, spec] of Object.entries(methods) as [Method, RouteMethod<S, C>][]) {
    const declared = propertyNames(spec.params)
    if (declared !== undefined && declared.join('/') !== names.join('/')) {
      throw new Error(`${method} ${pattern}: the params schema declares ${declared.join(', ') || 'nothing'}, the pattern captures ${names.join(', ') || 'nothing'}`)
    }
    compiled[method] = {
      spec,
      params: spec.params === undefined ? undefined : schemas.compile(spec.params, 'the path'),
      query: spec.query === undefined ? undefined : schemas.compile(spec.query, 'the query'),
      json: spec.json === undefined ? undefined : schemas.compile(spec.json, 'the request body'),
    }
  }
  return {
    pattern,
    parts: segments.map((s) => (s.startsWith(':') ? undefined : s)),
    names,
    methods: compiled,
    allow: Object.keys(methods).join(', '),
  }
}

export class Router<S, C> {
  readonly routes: readonly CompiledRoute<S, C>[]
  private readonly byLength = new Map<number, CompiledRoute<S, C>[]>()

  constructor(table: RouteTable<S, C>, schemas: SchemaCompiler, private readonly options: RouterOptions) {
    this.routes = table.map(([pattern, methods]) => compileRoute(pattern, methods, schemas))
    for (const route of this.routes) {
      const list = this.byLength.get(route.parts.length) ?? []
      list.push(route)
      this.byLength.set(route.parts.length, list)
    }
  }

  /** The route for `segments` from index `from` on, with its captures by name. */
  match(segments: readonly string[], from: number): Match<S, C> | undefined {
    const candidates = this.byLength.get(segments.length - from)
    if (candidates === undefined) return undefined
    for (const route of candidates) {
      if (!this.fits(route, segments, from)) continue
      const params: Record<string, string> = {}
      for (let i = 0, n = 0; i < route.parts.length; i++) {
        if (route.parts[i] !== undefined) continue
        const segment = segments[from + i]!
        this.options.checkCapture?.(segment)
        params[route.names[n++]!] = segment
      }
      return { route, params }
    }
    return undefined
  }

  private fits(route: CompiledRoute<S, C>, segments: readonly string[], from: number): boolean {
    for (let i = 0; i < route.parts.length; i++) {
      const part = route.parts[i]
      const segment = segments[from + i]!
      if (part === undefined ? segment === '' && !this.options.emptyCaptures : part !== segment) return false
    }
    return true
  }
}
