// Who sent a request, for per-source limits: the socket peer, unless the
// peer is a proxy the operator trusts (--trust-proxy); then the right-most
// X-Forwarded-For entry that is not a trusted proxy (entries left of it
// were written by the client and prove nothing).
import type { AddressSet } from './addresses'
import { parseIp } from './addresses'

/**
 * The address as one canonical text, so "::ffff:10.0.0.1" and "10.0.0.1" are
 * one source; an IPv6 address counts as its /64, which one subscriber
 * usually holds whole (else each of its 2^64 addresses would be a new source).
 */
function canonical(address: string): string {
  const bytes = parseIp(address.trim())
  if (bytes === undefined) return address.trim()
  if (bytes.length === 4) return bytes.join('.')
  return `${Array.from({ length: 4 }, (_, i) => ((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!).toString(16)).join(':')}::/64`
}

export function clientSource(peer: string, forwardedFor: string, trusted: AddressSet): string {
  if (trusted.size === 0 || !trusted.has(peer)) return canonical(peer)
  const hops = forwardedFor.split(',').map((h) => h.trim()).filter((h) => h !== '')
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (!trusted.has(hop)) return canonical(hop)
  }
  // Every hop is a trusted proxy: the left-most is as near the client as we can tell.
  return canonical(hops[0] ?? peer)
}

/** The source of a request on the front thread (an Exchange). */
export function requestSource(ex: { peer: string; headers: { 'x-forwarded-for': string } }, trusted: AddressSet): string {
  return clientSource(ex.peer, ex.headers['x-forwarded-for'], trusted)
}
