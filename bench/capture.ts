// Copies real answers of the loaded service into the ceiling's fixed bodies,
// so the ceiling puts the same bytes on the wire as the service does.
import { request } from 'undici'
import { BUILT_IN_BODIES, type CeilingBodies } from './ceiling-bodies'
import { HUB10, HUB1000, TENANTS, TOKEN_PATH, counterPath, customerName, neighboursPath, nodePath, searchPath, type TenantHeaders } from './fixture'
import type { BenchRequest } from './load'

async function fetchBody(origin: string, r: BenchRequest): Promise<string | undefined> {
  try {
    const res = await request(`${origin}${r.path}`, { method: r.method, headers: r.headers, body: r.body })
    const text = await res.body.text()
    return res.statusCode === 200 ? text : undefined
  } catch {
    return undefined
  }
}

export async function captureBodies(origin: string, h: readonly TenantHeaders[], log: (line: string) => void): Promise<CeilingBodies> {
  const t = TENANTS[0]!.id
  const read = h[0]!.read
  const wanted: Record<'node' | 'list' | 'n10' | 'n1000' | 'counter' | 'token', BenchRequest> = {
    node: { method: 'GET', path: nodePath(t, 'customer', 'c1'), headers: read },
    list: { method: 'GET', path: searchPath(t, customerName(1)), headers: read },
    n10: { method: 'GET', path: neighboursPath(t, `${HUB10}0`), headers: read },
    n1000: { method: 'GET', path: neighboursPath(t, `${HUB1000}0`), headers: read },
    counter: { method: 'POST', path: counterPath(t, 'c0', 'p0', 'capture'), headers: h[0]!.post },
    token: { method: 'POST', path: TOKEN_PATH, headers: h[0]!.token, body: 'grant_type=client_credentials' },
  }
  const got: Partial<Record<keyof typeof wanted, string>> = {}
  for (const [name, r] of Object.entries(wanted) as Array<[keyof typeof wanted, BenchRequest]>) {
    const body = await fetchBody(origin, r)
    if (body === undefined) log(`  capture: ${name} (${r.method} ${r.path}) did not answer 200; the ceiling uses a built-in body`)
    else got[name] = body
  }
  const fallbackNeighbours = BUILT_IN_BODIES.neighbours[0]!.body
  const bodies: CeilingBodies = {
    node: got.node ?? BUILT_IN_BODIES.node,
    list: got.list ?? BUILT_IN_BODIES.list,
    neighbours: [
      { idPrefix: HUB1000, body: got.n1000 ?? fallbackNeighbours },
      { idPrefix: HUB10, body: got.n10 ?? fallbackNeighbours },
    ],
    counter: got.counter ?? BUILT_IN_BODIES.counter,
    token: got.token ?? BUILT_IN_BODIES.token,
    captured: Object.keys(got),
  }
  log(`  ceiling bodies (bytes): node ${bodies.node.length}, list ${bodies.list.length}, neighbours-10 ${bodies.neighbours[1]!.body.length}, `
    + `neighbours-1000 ${bodies.neighbours[0]!.body.length}, counter ${bodies.counter.length}, token ${bodies.token.length}`)
  return bodies
}
