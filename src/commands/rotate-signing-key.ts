// The signing key rotation command:
//
//   node dist/src/rotate-signing-key.js [--data-dir ./data] [--master-key-file ./secrets/master.key]
//     [--server-url URL] [--admin-client-id ID] [ADMIN_CLIENT_SECRET=...]
//
// It makes a new RSA key and makes it the active key; the previous key stays
// in the JWKS until the ID tokens it signed have expired (token lifetime plus
// a clock margin). It prints the retired and the new kid.
//
// While a server runs on the data directory (its lock says so, and where it
// listens) or when --server-url is given, the rotation goes through that
// server's POST /oauth2/v1/admin/signing-keys with a platform.admin client's
// credentials: the server's caches stay right. Only when the server is
// stopped are the files opened directly, under the data directory's lock so
// that no server starts meanwhile.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { openAuthStore } from '../auth/models/auth-store'
import { rotateSigningKey } from '../auth/models/signing-keys'
import { ConfigError, loadToolConfig, usage, wantsHelp, type ToolConfig } from '../config/load-config'
import { loadOrCreateMasterKey } from '../crypto/master-key'
import { adminAuthorization, callServer } from './admin-client'
import { describeHolder, tryLockDataDir, type LockHolder } from '../start/data-dir-lock'
import { privateUmask } from '../start/file-modes'
import { generateSigningKey, unseal } from '../../workers/crypto/signing-key'
import { audit } from '../telemetry/log'

interface KeyView { kid: string; status: string }

async function rotateThroughServer(config: ToolConfig, serverUrl: string, holder: LockHolder | undefined): Promise<void> {
  const running = holder === undefined ? `the server at ${serverUrl} runs` : `${config.dataDir} is in use by ${describeHolder(holder)}`
  const auth = await adminAuthorization(config, serverUrl, running)
  const before = await callServer(`${serverUrl}/oauth2/v1/admin/signing-keys`, { headers: auth }) as KeyView[]
  const key = await callServer(`${serverUrl}/oauth2/v1/admin/signing-keys`, { method: 'POST', headers: auth }) as KeyView
  for (const k of before) if (k.status === 'active') console.log(`retired ${k.kid} (published until its tokens expire)`)
  console.log(`active ${key.kid}`)
}

async function rotateFiles(config: ToolConfig): Promise<void> {
  // Never create a key here: a new master key would seal a signing key the server cannot open.
  if (!existsSync(config.masterKeyFile)) throw new ConfigError(`master key file ${config.masterKeyFile} not found: pass the server's --master-key-file`)
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
    audit('signing_key.rotate', { client: 'rotate-signing-key' }, { kid: key.kid, retired: previous.map((k) => k.kid) })
    for (const k of previous) console.log(`retired ${k.kid} (published until its tokens expire)`)
    console.log(`active ${key.kid}`)
  } finally {
    await store.env.close()
  }
}

async function rotate(): Promise<void> {
  const argv = process.argv.slice(2)
  if (wantsHelp(argv)) {
    console.log(usage('node dist/src/rotate-signing-key.js', true))
    return
  }
  privateUmask()
  const config = loadToolConfig(argv, process.env)
  if (config.serverUrl !== undefined) {
    await rotateThroughServer(config, config.serverUrl, undefined)
    return
  }
  if (!existsSync(join(config.dataDir, 'auth'))) throw new ConfigError(`${config.dataDir} has no auth store: pass the server's --data-dir`)
  const lock = await tryLockDataDir(config.dataDir, 'rotate-signing-key')
  if (!('release' in lock)) {
    if (lock.url === undefined) throw new ConfigError(`${config.dataDir} is in use by ${describeHolder(lock)}: try again once it listens or is done`)
    await rotateThroughServer(config, lock.url, lock)
    return
  }
  try {
    await rotateFiles(config)
  } finally {
    lock.release()
  }
}

rotate().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? `error: ${err.message}` : err)
  process.exit(1)
})
