// The fixed answers of the ceiling server. The run captures them from the
// real server once its data is loaded (so the ceiling puts the same bytes on
// the wire); the built-in ones below are used only when a capture failed,
// and the report says which were captured.

export interface CeilingBodies {
  /** GET node. */
  node: string
  /** GET node list (q=). */
  list: string
  /** GET neighbours, by prefix of the source node's id (first match wins; the first entry is the default). */
  neighbours: Array<{ idPrefix: string; body: string }>
  /** POST counter. */
  counter: string
  /** POST token. */
  token: string
  /** Which of the above are copies of real answers of this run. */
  captured: string[]
}

const NODE = JSON.stringify({
  id: 'c1', 'consent-reference': 'consent-bench', created: 1700000000000, createdByHybrisClient: 'bench-client-00',
  tenant: 'bench-t00', schema: 'http://127.0.0.1:8080/graph/v1/bench-t00/metamodel/nodes/core/customer',
  name: 'Name 1', age: 42, email: 'c1@example.com', city: 'Berlin',
})

export const BUILT_IN_BODIES: CeilingBodies = {
  node: NODE,
  list: `[${NODE}]`,
  neighbours: [{ idPrefix: '', body: `[${NODE}]` }],
  counter: JSON.stringify({ fid: 'c1', tid: 'p1', id: 'hot', consentReference: 'consent-bench', created: 1700000000000, views: 1 }),
  token: JSON.stringify({ access_token: 'x'.repeat(43), token_type: 'Bearer', expires_in: 3600, scope: 'platform.profile_graph_view' }),
  captured: [],
}

export function isCeilingBodies(v: unknown): v is CeilingBodies {
  if (typeof v !== 'object' || v === null) return false
  const o = v as Record<string, unknown>
  return typeof o.node === 'string' && typeof o.list === 'string' && typeof o.counter === 'string'
    && typeof o.token === 'string' && Array.isArray(o.neighbours) && Array.isArray(o.captured)
}
