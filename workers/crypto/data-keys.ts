// The data keys of one shard: created at random, wrapped by the master key
// into a key-file slot, unwrapped on first use and kept in memory, destroyed
// (slot zeroed, memory zeroed) when a consent is revoked.
import { randomBytes } from 'node:crypto'
import { KeyFile } from './key-file'
import { open, seal } from './seal'

export class DataKeys {
  private readonly cache = new Map<number, Buffer>()

  constructor(private readonly file: KeyFile, private readonly masterKey: Buffer) {}

  private static aad(slot: number): string {
    return `data-key-slot:${slot}`
  }

  /** Writes a new key into `slot` (synced before this returns) and returns nothing else: the slot is its name. */
  create(slot: number): void {
    const key = randomBytes(32)
    this.file.write(slot, seal(this.masterKey, key, DataKeys.aad(slot)))
    this.cache.set(slot, key)
  }

  /** The key of a slot, or undefined when destroyed (or unreadable with this master key). */
  get(slot: number): Buffer | undefined {
    const cached = this.cache.get(slot)
    if (cached !== undefined) return cached
    const wrapped = this.file.read(slot)
    if (wrapped === undefined) return undefined
    const key = open(this.masterKey, wrapped, DataKeys.aad(slot))
    if (key !== undefined) this.cache.set(slot, key)
    return key
  }

  /**
   * Whether the slot holds a key that opens under the master key, without
   * keeping it: the start-up check reads every slot, and caching them all
   * would hold every consent's key in memory before any is used.
   */
  opens(slot: number): boolean {
    if (this.cache.has(slot)) return true
    const wrapped = this.file.read(slot)
    if (wrapped === undefined) return false
    const key = open(this.masterKey, wrapped, DataKeys.aad(slot))
    key?.fill(0)
    return key !== undefined
  }

  /** A master-key rotation: the slot's key wrapped again under `newMaster` (the key itself stays). */
  rewrap(slot: number, newMaster: Buffer): void {
    const key = this.get(slot)
    if (key === undefined) throw new Error(`key slot ${slot} does not open with the current master key`)
    this.file.write(slot, seal(newMaster, key, DataKeys.aad(slot)))
  }

  /** Zeroes and drops the cached key of a slot, leaving the file alone (a reading thread after a revocation). */
  forget(slot: number): void {
    this.cache.get(slot)?.fill(0)
    this.cache.delete(slot)
  }

  destroy(slot: number): void {
    const cached = this.cache.get(slot)
    if (cached !== undefined) cached.fill(0)
    this.cache.delete(slot)
    this.file.destroy(slot)
  }
}
