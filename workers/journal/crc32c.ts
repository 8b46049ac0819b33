// CRC-32C (Castagnoli), table-driven: Node 20 has none built in. It guards
// each journal record, so a torn or damaged one is told from a whole one.
const TABLE = new Uint32Array(256)
for (let n = 0; n < 256; n++) {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1
  TABLE[n] = c >>> 0
}

export function crc32c(data: Uint8Array, from = 0, to = data.length): number {
  let crc = 0xffffffff
  for (let i = from; i < to; i++) crc = TABLE[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}
