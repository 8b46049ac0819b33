// One line of a bulk request read as the request it stands for:
// {"method","path","headers"?,"body"?}. The line is parsed once, here; the
// dispatcher holds its body to the limits and schemas of a single request's
// body; only the headers a graph write reads are taken from a line.
import { ApiError } from '../core/errors'
import { checkJsonLimits, type JsonLimits } from '../http/json-limits'
import { parseJsonText } from '../http/parse-json'
import type { LineRequest } from '../http/line-exchange'

/**
 * A line's body, parsed. `fitsLimits`: the whole line is within the JSON
 * limits of a body, one level and one element (the line's own object) aside,
 * so its body is too; else the dispatcher checks the body's own text.
 * `lineBytes`: the line's size, which bounds the body's.
 */
export interface LineBody {
  value: unknown
  fitsLimits: boolean
  lineBytes: number
}

export interface BulkLine extends LineRequest {
  /** Undefined when the line has none. */
  body: LineBody | undefined
}

/** The line, or why not; `notJson`: the line is not a JSON value at all (on the first line, the body is not NDJSON). */
export type ParsedLine = { ok: true; line: BulkLine } | { ok: false; error: ApiError; notJson: boolean }

/** The headers a line may carry: those a write reads besides the token (src/graph/write-context.ts); others are ignored. */
export const LINE_HEADERS: ReadonlySet<string> = new Set([
  'consent-reference', 'platform-context-trace-id', 'traceparent',
  'platform-schedule-event-at', 'platform-schedule-event-parameter', 'platform-decay-at', 'platform-decay-parameters',
])

/** What the line's own object adds to its body: one level, and a few members and headers. */
const ENVELOPE_DEPTH = 1
const ENVELOPE_ELEMENTS = 64

const SHAPE = 'a bulk line must be a JSON object {"method": "PUT", "path": "nodes/...", "headers"?: {...}, "body"?: ...}'

const fail = (message: string, notJson = false): ParsedLine => ({ ok: false, error: new ApiError('bad_request', message), notJson })

function headersOf(value: unknown): [string, string][] | undefined {
  if (value === undefined) return []
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const headers: [string, string][] = []
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== 'string') return undefined
    const lower = name.toLowerCase()
    if (LINE_HEADERS.has(lower)) headers.push([lower, v])
  }
  return headers
}

export function parseBulkLine(bytes: Buffer, limits: JsonLimits): ParsedLine {
  // Bounds the parse below; a body past the limits fails with the single request's message, by the check of the whole line.
  let measured: JsonLimits
  try {
    measured = checkJsonLimits(bytes, { maxDepth: limits.maxDepth + ENVELOPE_DEPTH, maxElements: limits.maxElements + ENVELOPE_ELEMENTS })
  } catch (loose) {
    try {
      checkJsonLimits(bytes, limits)
    } catch (err) {
      if (err instanceof ApiError) return { ok: false, error: err, notJson: false }
    }
    return { ok: false, error: loose as ApiError, notJson: false }
  }
  let value: unknown
  try {
    value = parseJsonText(bytes)
  } catch (err) {
    return fail(`the line is not valid JSON: ${(err as Error).message}`, true)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(SHAPE)
  const { method, path, headers, body } = value as Record<string, unknown>
  if (typeof method !== 'string' || typeof path !== 'string') return fail(SHAPE)
  const given = headersOf(headers)
  if (given === undefined) return fail('a bulk line\'s "headers" must be an object of strings')
  // The line's own object is the one level and the one element beyond its body's.
  const fitsLimits = measured.maxDepth <= limits.maxDepth + ENVELOPE_DEPTH && measured.maxElements <= limits.maxElements + 1
  return { ok: true, line: { method, path, headers: given, body: body === undefined ? undefined : { value: body, fitsLimits, lineBytes: bytes.length } } }
}
