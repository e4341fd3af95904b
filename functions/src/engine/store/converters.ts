import type { DocumentData, FirestoreDataConverter, QueryDocumentSnapshot } from '@google-cloud/firestore';
import { isTimestamp } from '../../core/timestamp';

/**
 * A stored document as this code reads it: its fields, Timestamps turned
 * into Dates at any depth. Typed views of it (`asInstance` and the like in
 * collections.ts) narrow it further.
 */
export type StoredData = Record<string, unknown>;

/** Firestore Timestamps → Dates, recursively; everything else as it is. */
export function toDates(value: unknown): unknown {
  if (isTimestamp(value)) return value.toDate();
  if (Array.isArray(value)) return value.map(toDates);
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype)
    return datesIn(value);
  return value;
}

/** A document's fields with their Timestamps as Dates (see {@link toDates}). */
export function datesIn(data: DocumentData): StoredData {
  const out: StoredData = {};
  // defineProperty: a key named "__proto__" stays data instead of replacing the prototype.
  for (const [k, v] of Object.entries(data))
    Object.defineProperty(out, k, { value: toDates(v), enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * Reads through `ref.withConverter(STORED)` give {@link StoredData}, no
 * cast at the call site. Only for reads: this code writes plain objects
 * through unconverted references, so `toFirestore` passes data through.
 */
export const STORED: FirestoreDataConverter<StoredData> = {
  toFirestore: (data) => data,
  fromFirestore: (snapshot: QueryDocumentSnapshot): StoredData => datesIn(snapshot.data()),
};
