import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUERIES, type QueryShape } from '../../functions/src/queries';
import { coverage, type IndexFile } from '../../tools/indexes/coverage';

const file = JSON.parse(readFileSync(join(__dirname, '..', '..', 'firestore.indexes.json'), 'utf8')) as IndexFile;

describe('every query the code issues is served by firestore.indexes.json', () => {
  test.each(Object.entries(QUERIES).map(([name, q]) => [name, q.shape] as const))('%s', (_name, shape) => {
    expect(coverage(shape, file)).toEqual({ covered: true });
  });
});

describe('the coverage check itself', () => {
  const shape = (s: Partial<QueryShape>): QueryShape => ({ collection: 'inbox', equality: [], range: null, orderBy: [], ...s });
  test.each<[string, QueryShape, boolean]>([
    ['equality on indexed fields only', shape({ equality: ['status', 'reason'] }), true],
    ['equality on a field whose index is switched off', shape({ equality: ['receivedAt'] }), false],
    ['equality inside a switched-off map', shape({ equality: ['payload.workOrderId'] }), false],
    ['a single range field with its single-field index', shape({ range: 'shard' }), true],
    ['equality plus a range without a composite index', shape({ equality: ['status'], range: 'nextAttemptAt' }), false],
    ['the composite index, equality fields in the other order', shape({ equality: ['status', 'shard'], range: 'nextAttemptAt', orderBy: [{ field: 'nextAttemptAt', direction: 'asc' }] }), true],
    ['the composite index, wrong direction', shape({ equality: ['shard', 'status'], orderBy: [{ field: 'nextAttemptAt', direction: 'desc' }] }), false],
    ['a range field that is not the first orderBy', shape({ equality: ['shard'], range: 'nextAttemptAt', orderBy: [{ field: 'receivedAt', direction: 'asc' }] }), false],
    ['another collection', shape({ collection: 'jobs', equality: ['shard', 'status'], orderBy: [{ field: 'nextAttemptAt', direction: 'asc' }] }), false],
  ])('%s', (_name, s, covered) => {
    expect(coverage(s, file).covered).toBe(covered);
  });
});
