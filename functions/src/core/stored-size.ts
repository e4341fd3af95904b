/**
 * Firestore's count of a value's storage size
 * (https://firebase.google.com/docs/firestore/storage-size): a string is
 * its UTF-8 bytes + 1, a number, a date or a timestamp 8, a boolean or null
 * 1, a map the sum of its keys (bytes + 1) and values, an array the sum of
 * its values. Pure; what a document holds at most is 1 MiB by this count.
 */
export function storedSize(value: unknown, depth = 0): number {
  if (depth > 100) return 0;
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8') + 1;
  if (typeof value === 'number' || typeof value === 'bigint' || value instanceof Date) return 8;
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + storedSize(item, depth + 1), 0);
  if (typeof value === 'object') {
    // A Firestore Timestamp (seconds and nanoseconds) is stored as 8 bytes.
    if (typeof (value as { toMillis?: unknown }).toMillis === 'function') return 8;
    let sum = 0;
    for (const [key, item] of Object.entries(value))
      sum += Buffer.byteLength(key, 'utf8') + 1 + storedSize(item, depth + 1);
    return sum;
  }
  return 8;
}
