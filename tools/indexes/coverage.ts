import type { QueryShape } from '../../functions/src/queries';

/** firestore.indexes.json, the parts the check reads. */
export interface IndexFile {
  readonly indexes: ReadonlyArray<{
    readonly collectionGroup: string;
    readonly queryScope?: string;
    readonly fields: ReadonlyArray<{ readonly fieldPath: string; readonly order?: 'ASCENDING' | 'DESCENDING'; readonly arrayConfig?: string }>;
  }>;
  readonly fieldOverrides?: ReadonlyArray<{ readonly collectionGroup: string; readonly fieldPath: string; readonly indexes: readonly unknown[] }>;
}

const direction = (d: 'asc' | 'desc'): 'ASCENDING' | 'DESCENDING' => (d === 'asc' ? 'ASCENDING' : 'DESCENDING');

/** Whether the automatic single-field index of a field exists (not switched off by a field override, nor under a switched-off map). */
function singleFieldIndexed(file: IndexFile, collection: string, field: string): boolean {
  return !(file.fieldOverrides ?? []).some(
    (o) => o.collectionGroup === collection && o.indexes.length === 0 && (o.fieldPath === field || field.startsWith(`${o.fieldPath}.`)),
  );
}

/**
 * Whether production Firestore can serve a query shape with the declared
 * indexes: equality-only queries merge single-field indexes; one range or
 * order field alone uses its single-field index; anything else needs a
 * composite index listing the equality fields (any order), then the order
 * fields in order and direction. Returns the reason when not covered.
 */
export function coverage(shape: QueryShape, file: IndexFile): { covered: true } | { covered: false; reason: string } {
  const order = shape.orderBy.length > 0 ? shape.orderBy : shape.range === null ? [] : [{ field: shape.range, direction: 'asc' as const }];
  if (shape.range !== null && order[0]?.field !== shape.range) {
    return { covered: false, reason: `the range field ${shape.range} must be the first orderBy` };
  }
  const fields = [...shape.equality, ...order.map((o) => o.field)];
  const unindexed = fields.find((f) => !singleFieldIndexed(file, shape.collection, f));
  if (order.length === 0) {
    return unindexed === undefined ? { covered: true } : { covered: false, reason: `the single-field index of ${unindexed} is switched off` };
  }
  if (shape.equality.length === 0 && order.length === 1) {
    return unindexed === undefined ? { covered: true } : { covered: false, reason: `the single-field index of ${unindexed} is switched off` };
  }
  const match = file.indexes.some((index) => {
    if (index.collectionGroup !== shape.collection || (index.queryScope ?? 'COLLECTION') !== 'COLLECTION') return false;
    if (index.fields.length !== fields.length) return false;
    const head = index.fields.slice(0, shape.equality.length).map((f) => f.fieldPath);
    if ([...head].sort().join() !== [...shape.equality].sort().join()) return false;
    return order.every((o, i) => {
      const f = index.fields[shape.equality.length + i];
      return f !== undefined && f.fieldPath === o.field && f.order === direction(o.direction);
    });
  });
  return match ? { covered: true } : { covered: false, reason: `no composite index on ${shape.collection} (${fields.join(', ')})` };
}
