/**
 * A Firestore Timestamp, recognised by shape rather than `instanceof`, so a
 * module that only reads documents does not load @google-cloud/firestore
 * when the function starts (the package costs about 300 ms of cold start;
 * bench/cold-start.ts).
 */
export interface TimestampLike {
  readonly seconds: number;
  readonly nanoseconds: number;
  toDate(): Date;
}

export function isTimestamp(value: unknown): value is TimestampLike {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<TimestampLike>;
  return typeof v.seconds === 'number' && typeof v.nanoseconds === 'number' && typeof v.toDate === 'function';
}
