import type { QueryShape } from '../../functions/src/queries';

/** firestore.indexes.json, the parts the check reads. */
export interface IndexFile {
  readonly indexes: ReadonlyArray<{
    readonly collectionGroup: string;
    readonly queryScope?: string;
    readonly fields: ReadonlyArray<{
      readonly fieldPath: string;
      readonly order?: 'ASCENDING' | 'DESCENDING';
      readonly arrayConfig?: string;
    }>;
  }>;
  readonly fieldOverrides?: ReadonlyArray<{
    readonly collectionGroup: string;
    readonly fieldPath: string;
    readonly indexes: ReadonlyArray<{ readonly queryScope?: string }>;
  }>;
}

const direction = (d: 'asc' | 'desc'): 'ASCENDING' | 'DESCENDING' => (d === 'asc' ? 'ASCENDING' : 'DESCENDING');

/**
 * Whether the single-field index of a field serves a query of `scope`. In
 * collection scope Firestore keeps one automatically unless a field override
 * switches it off (the field's, or a map's above it); in collection-group
 * scope none exists unless the field's override lists one of that scope.
 */
function singleFieldIndexed(file: IndexFile, collection: string, field: string, scope: string): boolean {
  const overrides = (file.fieldOverrides ?? []).filter((o) => o.collectionGroup === collection);
  if (scope === 'COLLECTION_GROUP')
    return overrides.some((o) => o.fieldPath === field && o.indexes.some((i) => i.queryScope === 'COLLECTION_GROUP'));
  return !overrides.some(
    (o) => o.indexes.length === 0 && (o.fieldPath === field || field.startsWith(`${o.fieldPath}.`)),
  );
}

/**
 * Whether production Firestore can serve a query shape with the declared
 * indexes: equality-only queries (an array-contains among them) merge
 * single-field indexes; one range or order field alone uses its single-field
 * index; anything else needs a composite index listing the equality fields
 * and the array-contains field (with `arrayConfig: CONTAINS`) in any order,
 * then the order fields in order and direction. A collection-group query
 * needs indexes of that scope for each of its fields; one without fields
 * (document-name order only) needs none. Returns the reason when not covered.
 */
export function coverage(shape: QueryShape, file: IndexFile): { covered: true } | { covered: false; reason: string } {
  const order =
    shape.orderBy.length > 0
      ? shape.orderBy
      : shape.range === null
        ? []
        : [{ field: shape.range, direction: 'asc' as const }];
  if (shape.range !== null && order[0]?.field !== shape.range) {
    return { covered: false, reason: `the range field ${shape.range} must be the first orderBy` };
  }
  const head = shape.arrayContains === undefined ? shape.equality : [...shape.equality, shape.arrayContains];
  const fields = [...head, ...order.map((o) => o.field)];
  const scope = shape.scope ?? 'COLLECTION';
  const unindexed = fields.find((f) => !singleFieldIndexed(file, shape.collection, f, scope));
  const missing = `the single-field index of ${String(unindexed)} ${scope === 'COLLECTION_GROUP' ? 'has no collection-group scope (a field override must add one)' : 'is switched off'}`;
  if (order.length === 0 || (head.length === 0 && order.length === 1)) {
    return unindexed === undefined ? { covered: true } : { covered: false, reason: missing };
  }
  const match = file.indexes.some((index) => {
    if (index.collectionGroup !== shape.collection || (index.queryScope ?? 'COLLECTION') !== scope) return false;
    if (index.fields.length !== fields.length) return false;
    const leading = index.fields.slice(0, head.length);
    if (
      leading
        .map((f) => f.fieldPath)
        .sort()
        .join() !== [...head].sort().join()
    )
      return false;
    // The array-contains field needs its CONTAINS entry; an equality field an ordered one.
    if (
      !leading.every((f) =>
        f.fieldPath === shape.arrayContains ? f.arrayConfig === 'CONTAINS' : f.order !== undefined,
      )
    )
      return false;
    return order.every((o, i) => {
      const f = index.fields[head.length + i];
      return f !== undefined && f.fieldPath === o.field && f.order === direction(o.direction);
    });
  });
  return match
    ? { covered: true }
    : { covered: false, reason: `no composite index on ${shape.collection} (${fields.join(', ')})` };
}
