// Cluster mode's key-encryption key (KEK): it wraps the data keys, so that
// every host opens what any host granted (docs/design/replication.md, "Crypto-shredding
// across hosts"). It comes from configuration only: every host is given the
// same file (`--kek-file`); it is never generated here (a host with a KEK of
// its own would write keys no other host opens) and never sent over NATS.
//
// The file holds one base64 32-byte key per line. The first is the current
// KEK, which wraps every new key; any further lines are previous KEKs, kept
// only while a rotation re-wraps the keys they wrapped.
import { existsSync } from 'node:fs'
import { ConfigError } from '../config/load-config'
import { MASTER_KEY_BYTES, readPrivateFile } from './master-key'

/** The keys that wrap data keys: `current` wraps, every key of `all` (current first) may unwrap. */
export interface WrappingKeys {
  current: Buffer
  all: readonly Buffer[]
}

export function readKekFile(path: string): WrappingKeys {
  if (!existsSync(path)) throw new ConfigError(`KEK file ${path} is missing; in cluster mode every host is given the same KEK file (--kek-file), never a new one`)
  const lines = readPrivateFile(path, 'KEK file').split('\n').map((l) => l.trim()).filter((l) => l !== '')
  const keys = lines.map((l) => Buffer.from(l, 'base64'))
  if (keys.length === 0 || keys.some((k) => k.length !== MASTER_KEY_BYTES)) {
    throw new ConfigError(`KEK file ${path} must hold one base64 ${MASTER_KEY_BYTES}-byte key per line (the current KEK first)`)
  }
  return { current: keys[0]!, all: keys }
}
