// The blind index behind `q`: a keyed hash (HMAC-SHA256) of property and
// canonical JSON value, with a key per tenant derived from the master key.
// The index holds no plaintext, and without the master key its terms cannot
// be tested against guessed values.
import { createHmac } from 'node:crypto'
import { deriveKey } from '../../src/crypto/master-key'

export class BlindIndex {
  private readonly keys = new Map<string, Buffer>()

  constructor(private readonly masterKey: Buffer) {}

  term(tenant: string, property: string, value: string | number | boolean): string {
    let key = this.keys.get(tenant)
    if (key === undefined) {
      key = deriveKey(this.masterKey, `blind-index:${tenant}`)
      this.keys.set(tenant, key)
    }
    return createHmac('sha256', key).update(property).update('\0').update(JSON.stringify(value)).digest('base64url')
  }
}
