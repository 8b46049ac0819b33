// Loads the data set through the API, interleaving tenants so that every
// shard works at once: products, then customers and hubs, then the hubs'
// relations. Each phase is reported as an ingest rate; a phase with any
// non-2xx answer or error stops the run (the scenarios would measure nonsense).
import { HUB10, HUB1000, TENANTS, customerBody, customerName, nodePath, productBody, viewedBody, viewedPath, type TenantHeaders } from './fixture'
import { runAll, type BatchResult, type BenchRequest, type PoolShape } from './load'
import type { DataShape } from './options'

export interface PhaseReport {
  phase: string
  requests: number
  seconds: number
  rate: number
  non2xx: number
  errors: number
}

const LOAD_SHAPE: PoolShape = { connections: 64, pipelining: 1 }

/** Products of the degree-10 hub k: ten distinct ones spread over the catalogue. */
export function hub10Products(k: number, products: number): number[] {
  return Array.from({ length: 10 }, (_, j) => (k * 97 + j * 101) % products)
}

function* interleave(perTenant: number, make: (tenant: number, i: number) => BenchRequest): Generator<BenchRequest> {
  for (let i = 0; i < perTenant; i++) for (let t = 0; t < TENANTS.length; t++) yield make(t, i)
}

function* products(d: DataShape, h: readonly TenantHeaders[]): Generator<BenchRequest> {
  yield* interleave(d.productsPerTenant, (t, j) => ({
    method: 'PUT', path: nodePath(TENANTS[t]!.id, 'product', `p${j}`), headers: h[t]!.write, body: productBody(j),
  }))
}

function* customers(d: DataShape, h: readonly TenantHeaders[]): Generator<BenchRequest> {
  yield* interleave(d.customersPerTenant, (t, i) => ({
    method: 'PUT', path: nodePath(TENANTS[t]!.id, 'customer', `c${i}`), headers: h[t]!.write, body: customerBody(i, customerName(i)),
  }))
  const hubs = d.hub10PerTenant + d.hub1000PerTenant
  yield* interleave(hubs, (t, k) => {
    const id = k < d.hub10PerTenant ? `${HUB10}${k}` : `${HUB1000}${k - d.hub10PerTenant}`
    return { method: 'PUT', path: nodePath(TENANTS[t]!.id, 'customer', id), headers: h[t]!.write, body: customerBody(k, `Hub ${k}`) }
  })
}

function* relations(d: DataShape, h: readonly TenantHeaders[]): Generator<BenchRequest> {
  const edges: Array<{ hub: string; product: number }> = []
  for (let k = 0; k < d.hub10PerTenant; k++) for (const p of hub10Products(k, d.productsPerTenant)) edges.push({ hub: `${HUB10}${k}`, product: p })
  for (let k = 0; k < d.hub1000PerTenant; k++) for (let p = 0; p < 1000; p++) edges.push({ hub: `${HUB1000}${k}`, product: p })
  yield* interleave(edges.length, (t, e) => {
    const edge = edges[e]!
    return {
      method: 'PUT', path: viewedPath(TENANTS[t]!.id, edge.hub, `p${edge.product}`, 'v'), headers: h[t]!.write, body: viewedBody(e),
    }
  })
}

function report(phase: string, r: BatchResult): PhaseReport {
  return { phase, requests: r.sent, seconds: r.seconds, rate: r.rate, non2xx: r.non2xx, errors: r.errors }
}

export async function preload(origin: string, d: DataShape, h: readonly TenantHeaders[], log: (line: string) => void): Promise<PhaseReport[]> {
  if (d.productsPerTenant < 1000) throw new Error('productsPerTenant must be at least 1000 (the degree-1000 hubs)')
  const phases: Array<[string, Iterable<BenchRequest>]> = [
    ['products (PUT node, ~70 B)', products(d, h)],
    ['customers + hubs (PUT node, ~250 B)', customers(d, h)],
    ['hub relations (PUT relation)', relations(d, h)],
  ]
  const out: PhaseReport[] = []
  for (const [phase, requests] of phases) {
    const r = await runAll(origin, LOAD_SHAPE, requests)
    out.push(report(phase, r))
    log(`  load ${phase}: ${r.sent} requests in ${r.seconds.toFixed(1)} s = ${Math.round(r.rate)}/s, non-2xx ${r.non2xx}, errors ${r.errors}`)
    if (r.non2xx > 0 || r.errors > 0) {
      throw new Error(`loading ${phase} failed: ${JSON.stringify({ statuses: r.statuses, samples: r.non2xxSamples, errors: r.errorMessages })}`)
    }
  }
  return out
}
