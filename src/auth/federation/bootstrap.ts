// The bootstrap file's `identityProviders`: each read by the admin API's
// rules and stored (an upsert); the client secret is sealed anew at every
// start (no hashing to skip: sealing is cheap).
import { ConfigError } from '../../config/load-config'
import { ApiError } from '../../core/errors'
import { fieldsReader } from '../helpers/json-body'
import type { AuthStore } from '../models/auth-store'
import { authModels } from '../models/index'
import { IdentityProviders, type IdentityProviderRecord } from '../models/identity-providers'
import { ProviderEntry, providerProblem, readProviderFields } from './provider-fields'
import { sealSecret } from './sealed-secret'

const readEntry = fieldsReader(ProviderEntry)

function read(store: AuthStore, doc: Record<string, unknown>, path: string, secretKey: Buffer): IdentityProviderRecord {
  const entry = readEntry(doc, path)
  const id = entry.id
  const { record, clientSecret } = readProviderFields(entry, id, path)
  const problem = providerProblem(authModels(store), record)
  if (problem !== undefined) throw new ApiError('validation_violation', problem)
  return { ...record, sealedSecret: clientSecret == null ? undefined : sealSecret(secretKey, id, clientSecret) }
}

export async function applyIdentityProviderBootstrap(store: AuthStore, docs: readonly Record<string, unknown>[], secretKey: Buffer): Promise<void> {
  if (docs.length === 0) return
  const records = docs.map((doc, i) => {
    try {
      return read(store, doc, `identityProviders[${i}]`, secretKey)
    } catch (err) {
      if (err instanceof ApiError) throw new ConfigError(`bootstrap file: ${err.message.startsWith('identityProviders[') ? '' : `identityProviders[${i}]: `}${err.message}`)
      throw err
    }
  })
  await new IdentityProviders(store).storeAll(records)
}
