/**
 * Stored values as the operator's views show them: a field that should be
 * a string or a time, read from a document as operations/documents.ts's
 * `view` gives it (Timestamps already Dates), or null when it is absent or
 * of another type (edited by hand): never a crash, never "undefined".
 */

/** The value when it is a string, else null. */
export const stringOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The time as ISO 8601 when it is a Date, else null. */
export const isoOrNull = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : null);
