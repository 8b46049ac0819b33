// IP addresses as bytes and CIDR ranges: the allow-lists of the options
// (--webhook-allow, --trust-proxy) and the ranges a tenant may not make the
// server call (webhooks). IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are
// their IPv4 address, so no spelling slips past an IPv4 rule.
import { isIPv4, isIPv6 } from 'node:net'

export interface Cidr {
  bytes: Uint8Array
  prefix: number
}

function ipv4Bytes(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number))
}

function ipv6Bytes(text: string): Uint8Array {
  const out = new Uint8Array(16)
  let head = text
  let tailV4: Uint8Array | undefined
  const lastColon = text.lastIndexOf(':')
  if (text.includes('.')) {
    tailV4 = ipv4Bytes(text.slice(lastColon + 1))
    head = `${text.slice(0, lastColon + 1)}0:0`
  }
  const [left, right] = head.split('::') as [string, string | undefined]
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)))
  const l = groups(left)
  const r = right === undefined ? [] : groups(right)
  const all = right === undefined ? l : [...l, ...new Array<number>(8 - l.length - r.length).fill(0), ...r]
  all.forEach((g, i) => {
    out[i * 2] = g >> 8
    out[i * 2 + 1] = g & 0xff
  })
  if (tailV4 !== undefined) out.set(tailV4, 12)
  return out
}

/** An IPv4-mapped IPv6 address as its IPv4 bytes; every other address unchanged. */
function unmapped(bytes: Uint8Array): Uint8Array {
  if (bytes.length !== 16) return bytes
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return bytes
  return bytes[10] === 0xff && bytes[11] === 0xff ? bytes.slice(12) : bytes
}

/** The bytes of an IP address (brackets and an IPv6 zone allowed), or undefined when it is not one. */
export function parseIp(text: string): Uint8Array | undefined {
  let t = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  const zone = t.indexOf('%')
  if (zone !== -1) t = t.slice(0, zone)
  if (isIPv4(t)) return ipv4Bytes(t)
  if (isIPv6(t)) return unmapped(ipv6Bytes(t))
  return undefined
}

/** "10.0.0.0/8", "fd00::/8", or one address (a range of one). */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/')
  const bytes = parseIp(slash === -1 ? text : text.slice(0, slash))
  if (bytes === undefined) return undefined
  if (slash === -1) return { bytes, prefix: bytes.length * 8 }
  const raw = text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(raw)) return undefined
  let prefix = Number(raw)
  // "::ffff:10.0.0.0/104" is the IPv4 range 10.0.0.0/8.
  if (bytes.length === 4 && text.slice(0, slash).includes(':')) prefix -= 96
  if (prefix < 0 || prefix > bytes.length * 8) return undefined
  return { bytes, prefix }
}

export function inCidr(address: Uint8Array, range: Cidr): boolean {
  if (address.length !== range.bytes.length) return false
  let bits = range.prefix
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff
    if (((address[i] as number) & mask) !== ((range.bytes[i] as number) & mask)) return false
  }
  return true
}

/** A set of CIDR ranges. */
export class AddressSet {
  private readonly ranges: Cidr[]

  constructor(ranges: readonly string[]) {
    this.ranges = ranges.map((r) => {
      const c = parseCidr(r)
      if (c === undefined) throw new Error(`not an IP address or CIDR range: "${r}"`)
      return c
    })
  }

  get size(): number {
    return this.ranges.length
  }

  has(address: string | Uint8Array): boolean {
    const bytes = typeof address === 'string' ? parseIp(address) : address
    return bytes !== undefined && this.ranges.some((r) => inCidr(bytes, r))
  }
}

/**
 * IPv4 addresses that are not the public internet: unspecified, loopback,
 * private, carrier-grade NAT, link-local (cloud metadata 169.254.169.254),
 * IETF, documentation, benchmarking, multicast and reserved ranges.
 */
const NOT_PUBLIC_V4 = new AddressSet([
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12',
  '192.0.0.0/24', '192.0.2.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24',
  '224.0.0.0/4', '240.0.0.0/4',
])
/** Only global unicast (2000::/3) is public IPv6; within it, Teredo and documentation are not. */
const GLOBAL_V6 = parseCidr('2000::/3') as Cidr
const NOT_PUBLIC_V6 = new AddressSet(['2001::/32', '2001:db8::/32'])
/** Prefixes that carry an IPv4 address (NAT64 64:ff9b::/96 in the last 4 bytes, 6to4 2002::/16 in bytes 2-5). */
const NAT64 = parseCidr('64:ff9b::/96') as Cidr
const SIX_TO_FOUR = parseCidr('2002::/16') as Cidr

/**
 * Whether the address is anything but a public unicast address: loopback,
 * unspecified, private, unique-local (fc00::/7), link-local (fe80::/10),
 * multicast, reserved; an IPv4 address carried in IPv6 (mapped, NAT64,
 * 6to4) is judged as that IPv4 address.
 */
export function isNonPublic(address: string | Uint8Array): boolean {
  const bytes = typeof address === 'string' ? parseIp(address) : address
  if (bytes === undefined) return true
  if (bytes.length === 4) return NOT_PUBLIC_V4.has(bytes)
  if (inCidr(bytes, NAT64)) return NOT_PUBLIC_V4.has(bytes.slice(12))
  if (inCidr(bytes, SIX_TO_FOUR)) return NOT_PUBLIC_V4.has(bytes.slice(2, 6))
  return !inCidr(bytes, GLOBAL_V6) || NOT_PUBLIC_V6.has(bytes)
}
