import type * as FirestoreModule from '@google-cloud/firestore';
import type { Firestore, Query, Timestamp } from '@google-cloud/firestore';

/**
 * The pieces every group of the query registry (queries.ts) is built from:
 * a query's shape, which the index check reads, and its builder.
 */

/**
 * The document id as a field to order by. Required when a query runs, not
 * when this module loads: the functions import the registry at start-up and
 * load the Firestore client with their first request (test/e2e/lazy-start.test.ts).
 */
export const documentId = (): FirestoreModule.FieldPath =>
  (require('@google-cloud/firestore') as typeof FirestoreModule).FieldPath.documentId();

export interface QueryShape {
  readonly collection: string;
  /**
   * COLLECTION_GROUP for a query over every collection of that name
   * (`collectionGroup()`): it is served only by indexes of that scope, which
   * Firestore does not keep for single fields by default. Absent: COLLECTION.
   */
  readonly scope?: 'COLLECTION_GROUP';
  /** Fields compared with ==, in any order. */
  readonly equality: readonly string[];
  /** The array field compared with array-contains (at most one per query), if any: a composite index lists it with `arrayConfig: CONTAINS`. */
  readonly arrayContains?: string;
  /** The field compared with <, <=, >, >= (at most one), if any. */
  readonly range: string | null;
  /** orderBy fields with direction. */
  readonly orderBy: ReadonlyArray<{ readonly field: string; readonly direction: 'asc' | 'desc' }>;
}

export interface Registered<Args extends unknown[]> {
  /** Every shape the builder can produce (one per filter combination when filters are optional). */
  readonly shapes: readonly QueryShape[];
  readonly build: (db: Firestore, ...args: Args) => Query;
}

export function query<Args extends unknown[]>(
  shapes: QueryShape | readonly QueryShape[],
  build: (db: Firestore, ...args: Args) => Query,
): Registered<Args> {
  return { shapes: 'collection' in shapes ? [shapes] : shapes, build };
}

/** Where a page of a list ordered by a timestamp and the document id starts (`inbox waiting`, `inbox timers`): after this timestamp, then this id. */
export interface PageCursor {
  readonly at: Timestamp;
  readonly id: string;
}

/** All subsets of the fields, so the registry holds the shape of every filter combination the CLI can send. */
export const subsets = <T>(items: readonly T[]): T[][] =>
  items.reduce<T[][]>((all, item) => [...all, ...all.map((s) => [...s, item])], [[]]);
