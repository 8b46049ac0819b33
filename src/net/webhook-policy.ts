// Where a tenant's webhook may be delivered. By default only to public
// addresses: never loopback, private, link-local, unique-local, unspecified
// or cloud metadata hosts, so webhooks are no way into the server's network.
// The operator's allow-list (--webhook-allow: host names, *.suffixes, IPs,
// CIDRs) opens exceptions. Registration checks what the URL says (no DNS);
// delivery checks the address it actually connects to (src/events/webhook-connector.ts).
import { lookup } from 'node:dns/promises'
import { AddressSet, isNonPublic, parseCidr, parseIp } from './addresses'

/** Names that are the local host or a cloud metadata service wherever they resolve. */
const LOCAL_NAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal'])

const HOST_NAME = /^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/

export type Resolve = (host: string) => Promise<ReadonlyArray<{ address: string }>>

const systemResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true })

/** A delivery the policy refuses: the address is not allowed. */
export class AddressRefused extends Error {
  readonly code = 'ADDRESS_REFUSED'
}

const normalise = (host: string): string => host.toLowerCase().replace(/\.$/, '')

/** Why an allow-list entry is invalid, or undefined when it is a host name, *.suffix, IP or CIDR. */
export function invalidAllowEntry(entry: string): string | undefined {
  if (parseCidr(entry) !== undefined) return undefined
  if (entry.includes('/') || entry.includes(':')) return `"${entry}" is not a valid IP address or CIDR range`
  return HOST_NAME.test(normalise(entry)) ? undefined : `"${entry}" is not a host name, *.suffix, IP address or CIDR range`
}

export class WebhookPolicy {
  private readonly addresses: AddressSet
  private readonly names = new Set<string>()
  private readonly suffixes: string[] = []

  constructor(allow: readonly string[], private readonly resolve: Resolve = systemResolve) {
    const ranges: string[] = []
    for (const entry of allow) {
      const why = invalidAllowEntry(entry)
      if (why !== undefined) throw new Error(why)
      if (parseCidr(entry) !== undefined) ranges.push(entry)
      else if (entry.startsWith('*.')) this.suffixes.push(normalise(entry.slice(1)))
      else this.names.add(normalise(entry))
    }
    this.addresses = new AddressSet(ranges)
  }

  private nameAllowed(host: string): boolean {
    return this.names.has(host) || this.suffixes.some((s) => host.endsWith(s))
  }

  private addressAllowed(address: string | Uint8Array): boolean {
    return !isNonPublic(address) || this.addresses.has(address)
  }

  /** Why a webhook URL may not be registered (from its host alone, no DNS), or undefined. */
  refusal(url: URL): string | undefined {
    const host = normalise(url.hostname)
    if (this.nameAllowed(host)) return undefined
    const ip = parseIp(host)
    if (ip !== undefined) {
      return this.addressAllowed(ip) ? undefined : 'url points at a loopback, private, link-local or other non-public address; webhooks go to public addresses only'
    }
    if (LOCAL_NAMES.has(host) || host.endsWith('.localhost')) return `url names a local or metadata host ("${host}"); webhooks go to public addresses only`
    return undefined
  }

  /**
   * The address to connect to for `hostname`, resolved here so that the
   * address checked is the address connected to (a DNS answer that changes
   * between check and connection cannot help). Throws AddressRefused.
   */
  async address(hostname: string): Promise<string> {
    const host = normalise(hostname)
    const byName = this.nameAllowed(host)
    if (!byName && (LOCAL_NAMES.has(host) || host.endsWith('.localhost'))) throw new AddressRefused(`${host} is a local or metadata host`)
    const answers = await this.resolve(host)
    const chosen = answers.find((a) => byName || this.addressAllowed(a.address))
    if (chosen === undefined) {
      throw new AddressRefused(`${host} resolves to ${answers.map((a) => a.address).join(', ') || 'nothing'}: not a public address`)
    }
    return chosen.address
  }
}
