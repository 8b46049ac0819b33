// A piscina task: RS256 signing keys, kept off the front thread. `generate`
// makes an RSA key pair and returns its public JWK and the private key sealed
// (AES-256-GCM, key derived from the master key, the kid as additional
// authenticated data); `sign` opens a sealed key (cached per kid) and signs
// the claims it is given. The master key reaches the worker as workerData;
// the functions are exported for the rotation command, which runs without a
// pool.
import { createCipheriv, createDecipheriv, createPrivateKey, generateKeyPair, randomBytes, type KeyObject } from 'node:crypto'
import { promisify } from 'node:util'
import { workerData } from 'node:worker_threads'
import { calculateJwkThumbprint, exportJWK, SignJWT, type JWTPayload } from 'jose'
import { deriveKey } from '../../src/crypto/master-key'

export interface GeneratedKey {
  kid: string
  publicJwk: Record<string, string>
  sealed: string
}

export type SigningTask =
  | { op: 'generate' }
  | { op: 'sign'; kid: string; sealed: string; claims: JWTPayload }

const PURPOSE = 'signing-keys'
const IV_BYTES = 12
const TAG_BYTES = 16

function sealingKey(masterKey: Buffer): Buffer {
  return deriveKey(masterKey, PURPOSE)
}

export function seal(masterKey: Buffer, kid: string, plaintext: Buffer): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', sealingKey(masterKey), iv)
  cipher.setAAD(Buffer.from(`signing-key:${kid}`))
  const data = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url')
}

export function unseal(masterKey: Buffer, kid: string, sealed: string): Buffer {
  const raw = Buffer.from(sealed, 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(masterKey), raw.subarray(0, IV_BYTES))
  decipher.setAAD(Buffer.from(`signing-key:${kid}`))
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()])
}

export async function generateSigningKey(masterKey: Buffer): Promise<GeneratedKey> {
  const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 })
  const jwk = await exportJWK(publicKey)
  const kid = await calculateJwkThumbprint(jwk)
  const publicJwk: Record<string, string> = { kty: 'RSA', n: jwk.n!, e: jwk.e!, kid, alg: 'RS256', use: 'sig' }
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' })
  return { kid, publicJwk, sealed: seal(masterKey, kid, pkcs8) }
}

const opened = new Map<string, KeyObject>()

export async function signJwt(masterKey: Buffer, kid: string, sealed: string, claims: JWTPayload): Promise<string> {
  let key = opened.get(kid)
  if (key === undefined) {
    key = createPrivateKey({ key: unseal(masterKey, kid, sealed), format: 'der', type: 'pkcs8' })
    opened.set(kid, key)
  }
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid }).sign(key)
}

function poolMasterKey(): Buffer {
  const data = workerData as { masterKey?: Uint8Array } | undefined
  if (data?.masterKey === undefined) throw new Error('signing worker started without the master key')
  return Buffer.from(data.masterKey)
}

export default async function signingTask(task: SigningTask): Promise<GeneratedKey | string> {
  const masterKey = poolMasterKey()
  if (task.op === 'generate') return generateSigningKey(masterKey)
  return signJwt(masterKey, task.kid, task.sealed, task.claims)
}
