// The data keys of one shard: created at random, wrapped into a key-file
// slot (by the master key on one machine, by the cluster's KEK in cluster
// mode: src/crypto/kek-file.ts), unwrapped on first use and kept in memory,
// destroyed (slot zeroed, memory zeroed) when a consent is revoked.
import { randomBytes } from 'node:crypto'
import type { WrappingKeys } from '../../src/crypto/kek-file'
import { KeyFile } from './key-file'
import { open, seal } from './seal'

export class DataKeys {
  private readonly cache = new Map<number, Buffer>()
  /** Wraps new keys. */
  private readonly wrapKey: Buffer
  /** Unwrap, current first: during a KEK rotation a slot may still be wrapped by a previous KEK. */
  private readonly unwrapping: readonly Buffer[]

  constructor(private readonly file: KeyFile, wrapping: Buffer | WrappingKeys) {
    this.wrapKey = Buffer.isBuffer(wrapping) ? wrapping : wrapping.current
    this.unwrapping = Buffer.isBuffer(wrapping) ? [wrapping] : wrapping.all
  }

  private unwrap(wrapped: Buffer, slot: number): Buffer | undefined {
    for (const k of this.unwrapping) {
      const key = open(k, wrapped, DataKeys.aad(slot))
      if (key !== undefined) return key
    }
    return undefined
  }

  /** Whether previous KEKs are configured (a rotation is under way). */
  get rotating(): boolean {
    return this.unwrapping.length > 1
  }

  /** Whether a wrapped key (a replicated grant) opens with one of this host's keys, without keeping it. */
  opensWrapped(slot: number, wrapped: Buffer): boolean {
    const key = this.unwrap(wrapped, slot)
    key?.fill(0)
    return key !== undefined
  }

  /** A KEK rotation: wraps the slot's key under the current KEK if a previous one wraps it; returns whether it did. */
  rewrapUnderCurrent(slot: number): boolean {
    const wrapped = this.file.read(slot)
    if (wrapped === undefined) return false
    const underCurrent = open(this.wrapKey, wrapped, DataKeys.aad(slot))
    if (underCurrent !== undefined) {
      underCurrent.fill(0)
      return false
    }
    // A slot no key opens (never a live key's) is left alone: the key check at start names such slots.
    const key = this.get(slot)
    if (key === undefined) return false
    this.file.write(slot, seal(this.wrapKey, key, DataKeys.aad(slot)))
    return true
  }

  private static aad(slot: number): string {
    return `data-key-slot:${slot}`
  }

  /** Writes a new key into `slot` (synced before this returns) and returns nothing else: the slot is its name. */
  create(slot: number): void {
    const key = randomBytes(32)
    this.file.write(slot, seal(this.wrapKey, key, DataKeys.aad(slot)))
    this.cache.set(slot, key)
  }

  /** The key of a slot, or undefined when destroyed (or unreadable with this master key). */
  get(slot: number): Buffer | undefined {
    const cached = this.cache.get(slot)
    if (cached !== undefined) return cached
    const wrapped = this.file.read(slot)
    if (wrapped === undefined) return undefined
    const key = this.unwrap(wrapped, slot)
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
    return this.opensWrapped(slot, wrapped)
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
