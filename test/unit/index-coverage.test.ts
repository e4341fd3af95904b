import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIST_FILTER_FIELDS, QUERIES, type QueryShape } from '../../functions/src/queries';
import { coverage, type IndexFile } from '../../tools/indexes/coverage';

const file = JSON.parse(readFileSync(join(__dirname, '..', '..', 'firestore.indexes.json'), 'utf8')) as IndexFile;

const describeShape = (s: QueryShape): string =>
  `${s.scope === 'COLLECTION_GROUP' ? 'group ' : ''}${s.collection} ==[${s.equality.join(',')}]${s.range === null ? '' : ` range ${s.range}`}${s.orderBy.map((o) => ` by ${o.field} ${o.direction}`).join('')}`;

describe('every query the code issues is served by firestore.indexes.json', () => {
  test.each(
    Object.entries(QUERIES).flatMap(([name, q]) =>
      q.shapes.map((shape) => [name, describeShape(shape), shape] as const),
    ),
  )('%s: %s', (_name, _what, shape) => {
    expect(coverage(shape, file)).toEqual({ covered: true });
  });

  test('`inbox list` has a registered shape for each of its 16 filter combinations', () => {
    const combos = new Set(QUERIES.inboxList.shapes.map((s) => [...s.equality].sort().join(',')));
    expect(combos.size).toBe(2 ** LIST_FILTER_FIELDS.length);
    expect(combos).toContain([...LIST_FILTER_FIELDS].sort().join(','));
    expect(combos).toContain('');
  });

  // Equality-only queries merge single-field indexes, so they need no composite index;
  // they still fail in production if a field override switches a filtered field's index off.
  test.each(LIST_FILTER_FIELDS.map((f) => [f]))(
    'a field override exempting %s would make the list queries on it uncovered',
    (field) => {
      const exempted: IndexFile = {
        ...file,
        fieldOverrides: [...(file.fieldOverrides ?? []), { collectionGroup: 'inbox', fieldPath: field, indexes: [] }],
      };
      const uncovered = QUERIES.inboxList.shapes.filter((s) => !coverage(s, exempted).covered);
      expect(uncovered.length).toBe(2 ** (LIST_FILTER_FIELDS.length - 1));
      for (const s of uncovered) expect(s.equality).toContain(field);
    },
  );
});

describe('the coverage check itself', () => {
  const shape = (s: Partial<QueryShape>): QueryShape => ({
    collection: 'inbox',
    equality: [],
    range: null,
    orderBy: [],
    ...s,
  });
  test.each<[string, QueryShape, boolean]>([
    ['equality on indexed fields only', shape({ equality: ['status', 'reason'] }), true],
    ['equality on a field whose index is switched off', shape({ equality: ['receivedAt'] }), false],
    ['equality inside a switched-off map', shape({ equality: ['payload.caseId'] }), false],
    ['a single range field with its single-field index', shape({ range: 'shard' }), true],
    ['equality plus a range without a composite index', shape({ equality: ['status'], range: 'nextAttemptAt' }), false],
    [
      'the composite index, equality fields in the other order',
      shape({
        equality: ['status', 'shard'],
        range: 'nextAttemptAt',
        orderBy: [{ field: 'nextAttemptAt', direction: 'asc' }],
      }),
      true,
    ],
    [
      'the composite index, wrong direction',
      shape({ equality: ['shard', 'status'], orderBy: [{ field: 'nextAttemptAt', direction: 'desc' }] }),
      false,
    ],
    [
      'a range field that is not the first orderBy',
      shape({ equality: ['shard'], range: 'nextAttemptAt', orderBy: [{ field: 'receivedAt', direction: 'asc' }] }),
      false,
    ],
    [
      'another collection',
      shape({
        collection: 'jobs',
        equality: ['shard', 'status'],
        orderBy: [{ field: 'nextAttemptAt', direction: 'asc' }],
      }),
      false,
    ],
    [
      'array-contains with its CONTAINS entry in the composite index',
      shape({
        collection: 'correlationKeys',
        equality: ['shard'],
        arrayContains: 'waitingFor',
        orderBy: [{ field: 'waitingSince', direction: 'asc' }],
      }),
      true,
    ],
    [
      'array-contains on a field the index orders instead',
      shape({
        collection: 'correlationKeys',
        equality: ['waitingFor'],
        arrayContains: 'shard',
        orderBy: [{ field: 'waitingSince', direction: 'asc' }],
      }),
      false,
    ],
    [
      'an ordered query on a field whose single-field index is switched off',
      shape({ collection: 'correlationKeys', orderBy: [{ field: 'waitingSince', direction: 'asc' }] }),
      false,
    ],
    [
      'a collection-group query without fields (document-name order)',
      shape({ collection: 'rawChunks', scope: 'COLLECTION_GROUP' }),
      true,
    ],
    [
      'a collection-group query on a field with only its collection-scope index',
      shape({ collection: 'inbox', scope: 'COLLECTION_GROUP', equality: ['status'] }),
      false,
    ],
    [
      'a collection-scope composite index for a collection-group query',
      shape({
        collection: 'inbox',
        scope: 'COLLECTION_GROUP',
        equality: ['shard', 'status'],
        orderBy: [{ field: 'nextAttemptAt', direction: 'asc' }],
      }),
      false,
    ],
  ])('%s', (_name, s, covered) => {
    expect(coverage(s, file).covered).toBe(covered);
  });

  test('a collection-group query on a field is covered once a field override adds an index of that scope', () => {
    const s = shape({ collection: 'rawChunks', scope: 'COLLECTION_GROUP', range: 'index' });
    expect(coverage(s, file)).toEqual({
      covered: false,
      reason: 'the single-field index of index has no collection-group scope (a field override must add one)',
    });
    const withOverride: IndexFile = {
      ...file,
      fieldOverrides: [
        ...(file.fieldOverrides ?? []),
        {
          collectionGroup: 'rawChunks',
          fieldPath: 'index',
          indexes: [{ queryScope: 'COLLECTION' }, { queryScope: 'COLLECTION_GROUP' }],
        },
      ],
    };
    expect(coverage(s, withOverride)).toEqual({ covered: true });
  });
});
