// The client secrets of custom identity providers at rest: AES-256-GCM under
// a key derived from the master key (which is not in the data directory),
// the provider id as additional data so a sealed value cannot be moved to
// another provider. The front thread needs the plain secret at each code
// exchange, so it holds the derived key (never the master key itself).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { deriveKey } from '../../crypto/master-key'

const IV_BYTES = 12
const TAG_BYTES = 16

/** The key of this purpose, derived once at start. */
export function identityProviderSecretKey(masterKey: Buffer): Buffer {
  return deriveKey(masterKey, 'identity-provider secrets v1')
}

const aad = (provider: string): Buffer => Buffer.from(`identity-provider:${provider}`)

export function sealSecret(key: Buffer, provider: string, secret: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(aad(provider))
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url')
}

export function unsealSecret(key: Buffer, provider: string, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES))
  decipher.setAAD(aad(provider))
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
}
