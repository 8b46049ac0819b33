// The master key: 32 random bytes in MASTER_KEY_FILE, outside the data
// directory, readable only by the process user. It wraps the data keys and
// the signing keys; it is created on first start.
import { randomBytes, createHmac } from 'node:crypto'
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { ConfigError } from '../config/load-config'

export const MASTER_KEY_BYTES = 32

/**
 * `create`: the data directory is new. For an existing one a missing key file
 * is an error: a fresh key would open nothing, and it would then be written.
 */
export function loadOrCreateMasterKey(path: string, create = true): Buffer {
  if (!existsSync(path)) {
    if (!create) {
      throw new ConfigError(`master key file ${path} is missing, but the data directory was created with a master key; restore the key file (MASTER_KEY_FILE) it was created with`)
    }
    const key = randomBytes(MASTER_KEY_BYTES)
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
      // 'wx': never overwrite a key another process created meanwhile.
      const fd = openSync(path, 'wx', 0o600)
      writeSync(fd, key.toString('base64') + '\n')
      fsyncSync(fd)
      closeSync(fd)
    } catch (err) {
      throw new ConfigError(`master key file ${path} cannot be created (${(err as Error).message}); name a writable place with --master-key-file / MASTER_KEY_FILE`)
    }
    return key
  }
  const key = Buffer.from(readPrivateFile(path, 'master key file').trim(), 'base64')
  if (key.length !== MASTER_KEY_BYTES) {
    throw new ConfigError(`master key file ${path} does not hold a base64 ${MASTER_KEY_BYTES}-byte key`)
  }
  return key
}

/** The text of a key file: a regular file only its owner may read; anything else refuses the start, naming `what`. */
export function readPrivateFile(path: string, what: string): string {
  const st = statSync(path)
  if (!st.isFile()) throw new ConfigError(`${what} ${path} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}; give the path of the key file itself`)
  const mode = st.mode & 0o777
  if ((mode & 0o077) !== 0) throw new ConfigError(`${what} ${path} has mode ${mode.toString(8)}; it must be readable by its owner only (chmod 600)`)
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw new ConfigError(`${what} ${path} cannot be read (${(err as Error).message})`)
  }
}

/** A value the data directory keeps to tell, at start, whether it is given the right master key. */
export function masterKeyCheck(key: Buffer): string {
  return createHmac('sha256', key).update('profile-graph master key check v1').digest('base64url')
}

/** A key for one purpose, derived from the master key (HMAC as a KDF over a fixed label). */
export function deriveKey(master: Buffer, label: string): Buffer {
  return createHmac('sha256', master).update(`profile-graph ${label}`).digest()
}
