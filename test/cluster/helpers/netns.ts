// The cluster tests' network: one Linux bridge and one network namespace per
// NATS server and per product host, each joined to the bridge by a veth pair,
// on a private /24. Everything carries the fixed prefix `pgc`, so that a run
// removes what a crashed earlier run left behind before it starts.
import { execFileSync } from 'node:child_process'

export const PREFIX = 'pgc'
const BRIDGE = `${PREFIX}-br`
/** The test subnet: the bridge (and so this test process) is .1. */
const SUBNET = '10.231.77'
export const BRIDGE_ADDRESS = `${SUBNET}.1`

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

function tryIp(...args: string[]): void {
  try {
    ip(...args)
  } catch {
    // Already gone: clean-up is idempotent.
  }
}

/** Why namespaces cannot be made here, or undefined when they can (root with `ip`). */
export function namespacesUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'cluster tests need Linux network namespaces'
  if (process.getuid?.() !== 0) return 'cluster tests need root (they create network namespaces and a bridge)'
  try {
    ip('netns', 'add', `${PREFIX}-probe`)
    ip('netns', 'del', `${PREFIX}-probe`)
  } catch (err) {
    return `network namespaces cannot be made: ${(err as Error).message.split('\n')[0] ?? ''}`
  }
  return undefined
}

/** A namespace on the bridge: its name (for `ip netns exec`) and address. */
export interface Namespace {
  name: string
  address: string
}

/** Removes every namespace, veth and the bridge with the prefix (this run's or a crashed one's). */
export function removeNetwork(): void {
  for (const line of ip('netns', 'list').split('\n')) {
    const name = line.split(' ')[0] ?? ''
    if (name.startsWith(`${PREFIX}-`)) tryIp('netns', 'del', name)
  }
  for (const line of ip('-o', 'link', 'show').split('\n')) {
    const m = /^\d+: ([^:@]+)/.exec(line)
    if (m !== null && m[1]!.startsWith(`${PREFIX}-`)) tryIp('link', 'del', m[1]!)
  }
}

/** A fresh bridge with this process's address on it. */
export function createBridge(): void {
  removeNetwork()
  ip('link', 'add', BRIDGE, 'type', 'bridge')
  ip('addr', 'add', `${BRIDGE_ADDRESS}/24`, 'dev', BRIDGE)
  ip('link', 'set', BRIDGE, 'up')
}

/** Namespace `${PREFIX}-<label>` at `${SUBNET}.<octet>`, joined to the bridge. */
export function createNamespace(label: string, octet: number): Namespace {
  const name = `${PREFIX}-${label}`
  const outside = `${PREFIX}-v${octet}` // interface names are at most 15 characters
  const address = `${SUBNET}.${octet}`
  ip('netns', 'add', name)
  ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name)
  ip('link', 'set', outside, 'master', BRIDGE)
  ip('link', 'set', outside, 'up')
  ip('-n', name, 'addr', 'add', `${address}/24`, 'dev', 'eth0')
  ip('-n', name, 'link', 'set', 'eth0', 'up')
  ip('-n', name, 'link', 'set', 'lo', 'up')
  return { name, address }
}

/** The command prefix that runs a program inside the namespace. */
export function inNamespace(ns: Namespace): string[] {
  return ['ip', 'netns', 'exec', ns.name]
}

/**
 * Cuts `host` off the NATS servers, leaving its HTTP port reachable from the
 * test: each NATS namespace silently drops what it would send to the host
 * (a blackhole route), so the host's connections hang like a real partition
 * instead of failing fast.
 */
export function cutOff(host: Namespace, nats: readonly Namespace[]): void {
  for (const n of nats) ip('-n', n.name, 'route', 'add', 'blackhole', `${host.address}/32`)
}

/** Undoes cutOff. */
export function reconnect(host: Namespace, nats: readonly Namespace[]): void {
  for (const n of nats) tryIp('-n', n.name, 'route', 'del', 'blackhole', `${host.address}/32`)
}
