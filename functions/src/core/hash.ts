import { createHash } from 'node:crypto';

/** Hex SHA-256 of bytes or text. */
export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * A stable id from parts: JSON of the list (so ["a:b"] and ["a","b"] differ),
 * hashed (so ids are spread over the key space and never sequential, which
 * would hotspot Firestore), shortened to 160 bits.
 */
export function stableId(...parts: readonly string[]): string {
  return sha256Hex(JSON.stringify(parts)).slice(0, 40);
}

/**
 * JSON with object keys sorted, so equal values hash equally whatever the
 * sender's key order or whitespace. Recursive: call it only on validated,
 * shallow values (schema output), never on raw input.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify returns undefined for undefined, a function or a symbol; lib.d.ts says string
  return JSON.stringify(value) ?? 'null';
}
