// The undici dispatcher of webhook delivery: every new connection first asks
// the policy for the address (DNS resolved once, non-public addresses
// refused) and then connects to exactly that address, so DNS rebinding
// between the check and the connection cannot reach the internal network.
// TLS still verifies the certificate against the URL's host name (undici
// derives the servername from the original host).
import { Agent, buildConnector } from 'undici'
import type { WebhookPolicy } from '../net/webhook-policy'

export function guardedConnector(policy: WebhookPolicy, timeoutMs: number, base: buildConnector.connector = buildConnector({ timeout: timeoutMs })): buildConnector.connector {
  return (options, callback) => {
    let settled = false
    const fail = (err: unknown): void => {
      if (settled) return
      settled = true
      callback(err instanceof Error ? err : new Error(String(err)), null)
    }
    // A DNS lookup has no timeout of its own; the connect timeout starts only after it.
    const timer = setTimeout(() => fail(new Error(`resolving ${options.hostname} timed out`)), timeoutMs)
    policy.address(options.hostname).then(
      (address) => {
        clearTimeout(timer)
        if (settled) return
        settled = true
        base({ ...options, hostname: address }, callback)
      },
      (err: unknown) => {
        clearTimeout(timer)
        fail(err)
      },
    )
  }
}

/** An Agent that connects only where the policy allows (redirects are never followed: request() does not). */
export function guardedAgent(policy: WebhookPolicy, connectTimeoutMs: number): Agent {
  return new Agent({ connect: guardedConnector(policy, connectTimeoutMs) })
}
