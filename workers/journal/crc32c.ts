// CRC-32C (Castagnoli), table-driven, eight bytes a step ("slicing-by-8"):
// Node 20 has none built in. It guards each journal record, so a torn or
// damaged one is told from a whole one; every record is summed once when
// written, so its speed is the journal's.
const POLY = 0x82f63b78
const TABLES = Array.from({ length: 8 }, () => new Uint32Array(256))
const T0 = TABLES[0]!
for (let n = 0; n < 256; n++) {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1
  T0[n] = c >>> 0
}
// TABLES[k][n]: the CRC of byte n followed by k zero bytes.
for (let k = 1; k < 8; k++) {
  const prev = TABLES[k - 1]!
  const table = TABLES[k]!
  for (let n = 0; n < 256; n++) table[n] = (T0[prev[n]! & 0xff]! ^ (prev[n]! >>> 8)) >>> 0
}
const [, T1, T2, T3, T4, T5, T6, T7] = TABLES as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array]

export function crc32c(data: Uint8Array, from = 0, to = data.length): number {
  let crc = 0xffffffff
  let i = from
  for (const end8 = to - 7; i < end8; i += 8) {
    const lo = crc ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))
    crc = T7[lo & 0xff]! ^ T6[(lo >>> 8) & 0xff]! ^ T5[(lo >>> 16) & 0xff]! ^ T4[lo >>> 24]! ^
      T3[data[i + 4]!]! ^ T2[data[i + 5]!]! ^ T1[data[i + 6]!]! ^ T0[data[i + 7]!]!
  }
  for (; i < to; i++) crc = T0[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}
