// How long a fault keeps the cluster from serving: probes every 100 ms until
// every live host answers a read for every shard (200 or 404: a node nobody
// wrote is an answer; a 503 or no answer is not), or issues a token.
import { request } from 'undici'
import { TOKEN_PATH, nodePath } from './fixture'
import { count, type Statuses, type Target } from './chaos-load'
import { sleep } from './wait'

/** One probe request's status (0: no answer within a second: a paused host never answers). */
async function statusOf(url: string, options: { method?: 'GET' | 'POST'; headers: Readonly<Record<string, string>>; body?: string }): Promise<number> {
  try {
    const res = await request(url, { ...options, headersTimeout: 1000, bodyTimeout: 1000 })
    await res.body.dump()
    return res.statusCode
  } catch {
    return 0
  }
}

/** Does every origin read every target's shard now? */
export async function readsServed(origins: readonly string[], targets: readonly Target[]): Promise<boolean> {
  const statuses = await Promise.all(origins.flatMap((o) => targets.map((t) =>
    statusOf(`${o}${nodePath(t.tenant.id, 'customer', 'chaos-probe')}`, { headers: t.headers.read }))))
  return statuses.every((s) => s === 200 || s === 404)
}

/** Does every origin issue a token (client credentials) now? Counts each answer into `statuses`. */
export async function tokensServed(origins: readonly string[], target: Target, statuses: Statuses): Promise<boolean> {
  const answers = await Promise.all(origins.map((o) =>
    statusOf(`${o}${TOKEN_PATH}`, { method: 'POST', headers: target.headers.token, body: 'grant_type=client_credentials' })))
  for (const s of answers) count(statuses, s)
  return answers.every((s) => s === 200)
}

/**
 * Milliseconds from `since` until `served()` holds (asked every 100 ms) and
 * keeps holding until `observeMs` after `since` (a fault's effects may start
 * late: a NATS server's death stops lease renewals only seconds after it), or
 * undefined if it does not hold after `giveUpMs`.
 */
export async function recoveryMs(since: number, served: () => Promise<boolean>, giveUpMs: number, observeMs = 0): Promise<number | undefined> {
  let servedSince: number | undefined
  for (;;) {
    const ok = await served()
    const now = Date.now()
    servedSince = ok ? servedSince ?? now : undefined
    if (servedSince !== undefined && now - since >= observeMs) return servedSince - since
    if (servedSince === undefined && now - since > giveUpMs) return undefined
    await sleep(100)
  }
}
