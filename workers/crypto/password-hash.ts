// A piscina task: the slow hash (scrypt) for human-chosen secrets and
// passwords, kept off the front thread.
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

export interface ScryptHash { alg: 'scrypt'; salt: string; hash: string; N: number; r: number; p: number }

export type PasswordTask =
  | { op: 'hash'; secret: string }
  | { op: 'verify'; secret: string; stored: ScryptHash }

/** OWASP's scrypt settings (N=2^15, r=8, p=3: 32 MiB, as strong as N=2^17 with p=1). */
export const SCRYPT_PARAMS = { N: 1 << 15, r: 8, p: 3 }
const KEY_LEN = 32

function derive(secret: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_LEN, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key)))
  })
}

export default async function passwordTask(task: PasswordTask): Promise<ScryptHash | boolean> {
  if (task.op === 'hash') {
    const salt = randomBytes(16)
    const key = await derive(task.secret, salt, SCRYPT_PARAMS.N, SCRYPT_PARAMS.r, SCRYPT_PARAMS.p)
    return { alg: 'scrypt', salt: salt.toString('base64'), hash: key.toString('base64'), ...SCRYPT_PARAMS }
  }
  const { stored } = task
  const key = await derive(task.secret, Buffer.from(stored.salt, 'base64'), stored.N, stored.r, stored.p)
  const expected = Buffer.from(stored.hash, 'base64')
  return key.length === expected.length && timingSafeEqual(key, expected)
}
