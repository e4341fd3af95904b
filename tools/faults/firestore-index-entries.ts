/**
 * How many index entries a written document adds, from its fields and the
 * project's firestore.indexes.json, following Firestore's automatic indexing:
 * an ascending and a descending single-field entry per indexed scalar, one
 * array-contains entry per distinct element of an array, map subfields
 * recursively (the map itself is not), what fieldOverrides exempt or narrow,
 * and one entry per composite index whose fields the document all has
 * (times the distinct elements of an array-contains field of it).
 */

/** A Firestore v1 `Value` as protobufjs' toObject gives it (oneofs as fields). */
export interface WireValue {
  readonly nullValue?: unknown;
  readonly booleanValue?: boolean;
  readonly integerValue?: unknown;
  readonly doubleValue?: number;
  readonly timestampValue?: unknown;
  readonly stringValue?: string;
  readonly bytesValue?: unknown;
  readonly referenceValue?: string;
  readonly geoPointValue?: unknown;
  readonly arrayValue?: { readonly values?: readonly WireValue[] };
  readonly mapValue?: { readonly fields?: Readonly<Record<string, WireValue>> };
}

/** The parts of firestore.indexes.json the count needs. */
export interface IndexConfig {
  readonly indexes?: ReadonlyArray<{
    readonly collectionGroup: string;
    readonly fields: ReadonlyArray<{
      readonly fieldPath: string;
      readonly order?: string;
      readonly arrayConfig?: string;
    }>;
  }>;
  readonly fieldOverrides?: ReadonlyArray<{
    readonly collectionGroup: string;
    readonly fieldPath: string;
    readonly indexes: ReadonlyArray<{
      readonly order?: string;
      readonly arrayConfig?: string;
      readonly queryScope?: string;
    }>;
  }>;
}

/** The collection id of a document name (`projects/p/databases/d/documents/a/1/b/2` → `b`). */
export function collectionOf(documentName: string): string {
  const parts = documentName.split('/');
  return parts[parts.length - 2] ?? '';
}

/** Distinct elements of an array value (Firestore's array-contains index holds each value once). */
function distinct(values: readonly WireValue[]): number {
  return new Set(values.map((v) => JSON.stringify(v))).size;
}

/** The override that governs `path` (the longest overridden prefix: an override of a map covers its subfields). */
type FieldOverride = NonNullable<IndexConfig['fieldOverrides']>[number];

function overrideFor(config: IndexConfig, collection: string, path: string): FieldOverride | undefined {
  let best: FieldOverride | undefined;
  for (const o of config.fieldOverrides ?? []) {
    if (o.collectionGroup !== collection) continue;
    if (o.fieldPath === path || path.startsWith(`${o.fieldPath}.`))
      if (best === undefined || o.fieldPath.length > best.fieldPath.length) best = o;
  }
  return best;
}

/** Single-field entries of one field (recursing into maps). */
function singleField(config: IndexConfig, collection: string, path: string, value: WireValue): number {
  if (value.mapValue !== undefined) {
    return Object.entries(value.mapValue.fields ?? {}).reduce(
      (n, [k, v]) => n + singleField(config, collection, `${path}.${k}`, v),
      0,
    );
  }
  const override = overrideFor(config, collection, path);
  const isArray = value.arrayValue !== undefined;
  const elements = value.arrayValue === undefined ? 0 : distinct(value.arrayValue.values ?? []);
  if (override === undefined) return isArray ? elements : 2;
  // An override lists the indexes the field keeps (none: exempt); COLLECTION_GROUP ones are entries too.
  return override.indexes.reduce(
    (n, i) => n + (i.arrayConfig !== undefined ? (isArray ? elements : 0) : isArray ? 0 : 1),
    0,
  );
}

/** The value at a dotted path of a document's fields, or undefined. */
function valueAt(fields: Readonly<Record<string, WireValue>>, path: string): WireValue | undefined {
  const [head, ...rest] = path.split('.');
  const v = fields[head ?? ''];
  if (v === undefined || rest.length === 0) return v;
  return v.mapValue?.fields === undefined ? undefined : valueAt(v.mapValue.fields, rest.join('.'));
}

/** Index entries the document `fields` of collection `collection` has under `config`. */
export function indexEntries(
  config: IndexConfig,
  collection: string,
  fields: Readonly<Record<string, WireValue>>,
): number {
  let n = 0;
  for (const [name, value] of Object.entries(fields)) n += singleField(config, collection, name, value);
  for (const index of config.indexes ?? []) {
    if (index.collectionGroup !== collection) continue;
    let entries = 1;
    for (const f of index.fields) {
      const v = valueAt(fields, f.fieldPath);
      if (v === undefined) entries = 0;
      else if (f.arrayConfig !== undefined)
        entries *= v.arrayValue === undefined ? 0 : distinct(v.arrayValue.values ?? []);
    }
    n += entries;
  }
  return n;
}
