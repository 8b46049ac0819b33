// The headers a graph write carries: its consent reference first of all.
export interface WriteOptions {
  /** platform-context-trace-id: the id of the events this write causes. */
  traceId?: string
  /** Further headers the write reads: the scheduling and decay headers (docs/manual/graph-api.md). */
  headers?: Record<string, string>
  signal?: AbortSignal
}

export function writeHeaders(consent: string | undefined, options: WriteOptions): Record<string, string> {
  const headers: Record<string, string> = { ...options.headers }
  if (consent !== undefined) headers['consent-reference'] = consent
  if (options.traceId !== undefined) headers['platform-context-trace-id'] = options.traceId
  return headers
}
