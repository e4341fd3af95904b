import { isTimestamp } from '../../core/timestamp';

/**
 * One document a unit of work writes, as a person reviews it before it is
 * done (the shape of operations' PlannedWrite: engine/ does not import operations/).
 */
export interface UnitWrite {
  /** The document's path, e.g. `inbox/ID`. */
  readonly path: string;
  readonly op: 'create' | 'set' | 'delete';
  /** Top-level fields whose value changes (sorted); every field of a document new to the unit; empty for a delete. */
  readonly fields: readonly string[];
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/** A value as stored: a Timestamp as its Date, so a read value and the Date written back compare equal. */
const norm = (v: unknown): unknown => (isTimestamp(v) ? v.toDate() : v);

/**
 * Whether two field values are stored the same. Firestore drops undefined
 * (ignoreUndefinedProperties), so an undefined entry equals an absent one;
 * Dates and Timestamps compare by instant, bytes by content.
 */
export function sameValue(left: unknown, right: unknown): boolean {
  const a = norm(left);
  const b = norm(right);
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof Uint8Array || b instanceof Uint8Array)
    return a instanceof Uint8Array && b instanceof Uint8Array && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x: unknown, i) => sameValue(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => sameValue(a[k], b[k]));
  }
  if (isPlainObject(a) || isPlainObject(b)) return false;
  // Anything else (a GeoPoint, a DocumentReference) has its own isEqual.
  if (typeof a === 'object' && a !== null && typeof (a as { isEqual?: unknown }).isEqual === 'function') {
    return (a as { isEqual: (o: unknown) => boolean }).isEqual(b);
  }
  return Object.is(a, b) || (a === undefined && b === undefined);
}

/**
 * The top-level fields a write of `after` changes on a document read as
 * `before` (undefined: absent or not read, so every field it writes), sorted.
 * A field dropped by a full `set` counts as changed.
 */
export function changedFields(
  before: Readonly<Record<string, unknown>> | undefined,
  after: Readonly<Record<string, unknown>>,
): string[] {
  const present = (r: Readonly<Record<string, unknown>>): string[] => Object.keys(r).filter((k) => r[k] !== undefined);
  if (before === undefined) return present(after).sort();
  const keys = new Set([...present(before), ...present(after)]);
  return [...keys].filter((k) => !sameValue(before[k], after[k])).sort();
}
