// What encryption at rest costs per request, measured on the code the shard
// actors run (workers/crypto/seal.ts): sealing ~250-byte properties on a
// write, opening them on a read, with the element identity as AAD. Compared
// with the per-request budget of the actor at the rates `npm run bench`
// measures, it gives the share of throughput that encryption takes.
// `node dist/bench/encryption-cost.js [putRate getRate]`
import { randomBytes } from 'node:crypto'
import { open, seal } from '../workers/crypto/seal'

const key = randomBytes(32)
const props = JSON.stringify({ name: 'John Smith', email: 'john.smith@example.com', age: 42, city: 'Springfield', tags: ['vip', 'newsletter'], note: 'x'.repeat(120) })
const aad = JSON.stringify(['bench-t00', 'core', 'customer', 'c12345'])

function perOpMicros(fn: () => void, rounds: number): number {
  for (let i = 0; i < 2000; i++) fn()
  const start = process.hrtime.bigint()
  for (let i = 0; i < rounds; i++) fn()
  return Number(process.hrtime.bigint() - start) / 1e3 / rounds
}

const sealed = seal(key, props, aad)
const sealUs = perOpMicros(() => seal(key, props, aad), 100_000)
const openUs = perOpMicros(() => open(key, sealed, aad), 100_000)
const parseUs = perOpMicros(() => JSON.parse(props), 100_000)
console.log(`properties: ${props.length} bytes`)
console.log(`| step | µs per request |\n|---|---|`)
console.log(`| seal (AES-256-GCM, fresh nonce) | ${sealUs.toFixed(2)} |`)
console.log(`| open (AES-256-GCM, verify tag) | ${openUs.toFixed(2)} |`)
console.log(`| for scale: JSON.parse of the same text | ${parseUs.toFixed(2)} |`)
const [putRate, getRate] = process.argv.slice(2).map(Number)
if (putRate !== undefined && getRate !== undefined && putRate > 0 && getRate > 0) {
  // One actor core serves the rate; the share of its time spent in crypto is the throughput cost.
  const writeShare = (putRate * (sealUs + openUs)) / 1e6
  const readShare = (getRate * openUs) / 1e6
  console.log(`at ${putRate} PUT/s the actors spend ${(writeShare * 100).toFixed(1)}% of one core on crypto (a PUT opens the old and seals the new)`)
  console.log(`at ${getRate} GET/s the actors spend ${(readShare * 100).toFixed(1)}% of one core on crypto`)
}
