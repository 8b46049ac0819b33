// The signing key rotation command:
//
//   node dist/src/rotate-signing-key.js [--data-dir ./data] [--master-key-file ./secrets/master.key]
//
// (the same flags and environment variables as the server; it may run while
// the server runs). It makes a new RSA key, sealed under the master key, and
// makes it the active key; the previous key stays in the JWKS until the ID
// tokens it signed have expired (token lifetime plus a clock margin). It
// prints the new kid.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { openAuthStore } from './auth/auth-store'
import { rotateSigningKey } from './auth/signing-keys'
import { ConfigError, loadConfig } from './config'
import { loadOrCreateMasterKey } from './crypto/master-key'
import { generateSigningKey, unseal } from '../workers/crypto/signing-key'

async function rotate(): Promise<void> {
  const config = loadConfig(process.argv.slice(2), process.env)
  // Never create a key here: a new master key would seal a signing key the server cannot open.
  if (!existsSync(config.masterKeyFile)) throw new ConfigError(`master key file ${config.masterKeyFile} not found: pass the server's --master-key-file`)
  if (!existsSync(join(config.dataDir, 'auth'))) throw new ConfigError(`${config.dataDir} has no auth store: pass the server's --data-dir`)
  const masterKey = loadOrCreateMasterKey(config.masterKeyFile)
  const store = openAuthStore(config.dataDir)
  try {
    const previous = [...store.signingKeys.getRange()].map(({ value }) => value).filter((k) => k.retired === undefined)
    for (const k of previous) {
      try {
        unseal(masterKey, k.kid, k.sealed)
      } catch {
        throw new ConfigError(`the master key ${config.masterKeyFile} does not open signing key ${k.kid}: is it the server's master key?`)
      }
    }
    const key = await rotateSigningKey(store, await generateSigningKey(masterKey))
    for (const k of previous) console.log(`retired ${k.kid} (published until its tokens expire)`)
    console.log(`active ${key.kid}`)
  } finally {
    await store.env.close()
  }
}

rotate().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? `error: ${err.message}` : err)
  process.exit(1)
})
