import { createHash } from 'node:crypto';

/**
 * The two checksums Cloud Storage keeps for every object, base64 of the
 * big-endian bytes as the JSON API reports them (`md5Hash`, `crc32c`) and as
 * the `x-goog-hash` header of a download carries them. The client checks the
 * crc32c of every upload against the answer and of every full download
 * against the header, so both must be the real algorithms.
 */
export interface ObjectHashes {
  readonly md5Hash: string;
  readonly crc32c: string;
}

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one table entry per byte value. */
const TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC-32C of `data` as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  // An indexed loop: iterating a Buffer with for-of took two to eight times as long on a 10 MiB upload.
  for (let i = 0; i < data.length; i++) crc = (TABLE[(crc ^ (data[i] ?? 0)) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export function hashesOf(data: Buffer): ObjectHashes {
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32c(data));
  return { md5Hash: createHash('md5').update(data).digest('base64'), crc32c: crc.toString('base64') };
}
