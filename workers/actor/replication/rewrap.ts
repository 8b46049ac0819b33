// A KEK rotation on the shard's owner (docs/design/replication.md, "Crypto-shredding
// across hosts"): every live data key still wrapped by a previous KEK is
// wrapped again by the current one. Run as a replicated write: each slot
// written becomes a new grant message, which supersedes the old one (erased
// from the stream) and which the standbys apply to their key files.
import { statSync } from 'node:fs'
import { SLOT_BYTES } from '../../crypto/key-file'
import type { ShardStore } from '../../store/shard-store'

/**
 * Re-wraps live slots not under the current KEK, at most `limit` (each is
 * one grant message appended in turn: the caller runs batches of them, so
 * that the shard's other writes get between them); returns how many.
 * Destroyed slots (zeros) stay as they are.
 */
export function rewrapUnderCurrentKek(store: ShardStore, limit: number): number {
  const slots = Math.floor(statSync(store.keyFile.path).size / SLOT_BYTES)
  let rewrapped = 0
  for (let slot = 0; slot < slots && rewrapped < limit; slot++) if (store.keys.rewrapUnderCurrent(slot)) rewrapped++
  return rewrapped
}
