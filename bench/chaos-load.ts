// The chaos bench's write load: a fixed number of put-node requests in
// flight, spread over whichever hosts are live at each request, recording
// every acknowledged (204) write and counting the other answers per phase
// (the fault, then the restore); and reading every acknowledged write back
// at the end of a run (it must be there).
import { request } from 'undici'
import { customerBody, customerName, nodePath, type Tenant, type TenantHeaders } from './fixture'
import { sleep } from './wait'

/** A tenant the load writes to, with its headers. */
export interface Target {
  tenant: Tenant
  headers: TenantHeaders
}

/** Status counts (0: no answer: refused, reset or timed out). */
export type Statuses = Record<string, number>

export interface WriteLoad {
  /** Where the answers now counted go. */
  phase: string
  /** Acknowledged writes: target index and node id. */
  acknowledged: { target: number; id: string }[]
  /** Answers other than 204 per phase. */
  others: Record<string, Statuses>
  stop(): Promise<void>
}

export const count = (into: Statuses, status: number): void => { into[status] = (into[status] ?? 0) + 1 }

/** Starts `inFlight` writers; each sends its next write to the next of `origins()` (the live hosts). */
export function startWriteLoad(origins: () => readonly string[], targets: readonly Target[], inFlight: number, prefix: string): WriteLoad {
  const load: WriteLoad = { phase: 'fault', acknowledged: [], others: {}, stop: async () => undefined }
  let running = true
  let turn = 0
  const writers = Array.from({ length: inFlight }, async (_, w) => {
    for (let i = 0; running; i++) {
      const live = origins()
      const origin = live[turn++ % Math.max(1, live.length)]
      const target = (w + i) % targets.length
      const { tenant, headers } = targets[target]!
      const id = `${prefix}-${w}-${i}`
      let status = 0
      if (origin !== undefined) {
        try {
          const res = await request(`${origin}${nodePath(tenant.id, 'customer', id)}`, {
            method: 'PUT', headers: headers.write, body: customerBody(i, customerName(i)), headersTimeout: 20_000, bodyTimeout: 20_000,
          })
          await res.body.dump()
          status = res.statusCode
        } catch {
          // no answer: counted as 0
        }
      }
      if (status === 204) load.acknowledged.push({ target, id })
      else {
        count(load.others[load.phase] ??= {}, status)
        // What a client would do on a 503 or a dead host: not hammer it.
        await sleep(50)
      }
    }
  })
  load.stop = async () => {
    running = false
    await Promise.all(writers)
  }
  return load
}

/** Reads every acknowledged write back through `origins` (a 503 asked again for up to 10 s); returns how many were not there. */
export async function lostWrites(origins: readonly string[], targets: readonly Target[], acknowledged: WriteLoad['acknowledged'], parallel = 32): Promise<number> {
  let lost = 0
  let next = 0
  await Promise.all(Array.from({ length: parallel }, async (_, r) => {
    for (let k = next++; k < acknowledged.length; k = next++) {
      const { target, id } = acknowledged[k]!
      const { tenant, headers } = targets[target]!
      const origin = origins[(k + r) % origins.length]!
      const giveUp = Date.now() + 10_000
      for (;;) {
        const status = await request(`${origin}${nodePath(tenant.id, 'customer', id)}`, { headers: headers.read, headersTimeout: 10_000, bodyTimeout: 10_000 })
          .then(async (res) => { await res.body.dump(); return res.statusCode }, () => 0)
        if (status === 200) break
        if ((status !== 503 && status !== 0) || Date.now() > giveUp) {
          lost++
          break
        }
        await sleep(100)
      }
    }
  }))
  return lost
}
