/**
 * The counting proxy of bench:cost counts exactly what a known sequence of
 * real Firestore client calls does, at the wire, on the emulator.
 */
import { FieldValue, type Firestore } from '@google-cloud/firestore';
import { indexEntries, type IndexConfig, type WireValue } from '../../tools/faults/firestore-index-entries';
import { type FirestoreCountingProxy, startFirestoreCountingProxy } from '../../tools/faults/firestore-counting-proxy';
import { freshFirestores } from '../support/firestore';

const firestore = freshFirestores();
let proxy: FirestoreCountingProxy;
let db: Firestore;

beforeAll(async () => {
  proxy = await startFirestoreCountingProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '', {
    indexes: [],
    fieldOverrides: [],
  });
  db = firestore('counting', { host: proxy.host });
});
firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await proxy?.close();
});

/** The counts settle once the calls' answers have passed the proxy; a call's trailers may come a moment after the client resolves. */
async function settled(
  expect: (c: ReturnType<FirestoreCountingProxy['counts']>) => boolean,
): Promise<ReturnType<FirestoreCountingProxy['counts']>> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const c = proxy.counts();
    if (expect(c) || Date.now() > deadline) return c;
    await new Promise((r) => setImmediate(r));
  }
}

test('a transaction with 2 gets and 3 writes, a query of 4, an empty query and a batch with a delete', async () => {
  const col = db.collection('items');
  await Promise.all([1, 2, 3, 4].map((i) => col.doc(`q${i}`).set({ kind: 'four', n: i })));
  await db.collection('other').doc('x').set({ a: 1 });
  proxy.reset();

  await db.runTransaction(async (tx) => {
    const a = await tx.get(col.doc('q1'));
    const b = await tx.get(col.doc('absent'));
    tx.update(col.doc('q1'), { n: (a.get('n') as number) + 10 });
    tx.create(col.doc('new'), { exists: b.exists });
    tx.set(col.doc('q2'), { seen: FieldValue.serverTimestamp() }, { merge: true });
  });
  let c = await settled((x) => x.commits === 1);
  expect({
    reads: c.reads,
    found: c.readsFound,
    missing: c.readsMissing,
    writes: c.writes,
    creates: c.creates,
    updates: c.updates,
    deletes: c.deletes,
  }).toEqual({ reads: 2, found: 1, missing: 1, writes: 3, creates: 1, updates: 2, deletes: 0 });

  proxy.reset();
  expect((await col.where('kind', '==', 'four').get()).size).toBe(4);
  c = await settled((x) => x.queryReads === 4);
  expect(c.reads).toBe(4);

  proxy.reset();
  expect((await col.where('kind', '==', 'none').get()).size).toBe(0);
  c = await settled((x) => x.queryReads === 1);
  expect(c.reads).toBe(1);

  proxy.reset();
  const batch = db.batch();
  batch.delete(col.doc('q3'));
  batch.set(col.doc('q5'), { kind: 'five' });
  await batch.commit();
  c = await settled((x) => x.commits === 1);
  expect({ reads: c.reads, writes: c.writes, deletes: c.deletes }).toEqual({ reads: 0, writes: 1, deletes: 1 });

  proxy.reset();
  expect((await col.count().get()).data().count).toBe(5);
  c = await settled((x) => x.aggregationReads === 1);
  expect(c.reads).toBe(1);
});

test('a commit that fails counts no writes', async () => {
  const col = db.collection('failing');
  await col.doc('there').set({ a: 1 });
  proxy.reset();
  await expect(col.doc('there').create({ a: 2 })).rejects.toThrow();
  const c = await settled((x) => x.failedCommits === 1);
  expect({ writes: c.writes, failed: c.failedCommits }).toEqual({ writes: 0, failed: 1 });
});

test('the index entries of a document of known shape', () => {
  const config: IndexConfig = {
    indexes: [
      {
        collectionGroup: 'docs',
        fields: [
          { fieldPath: 'status', order: 'ASCENDING' },
          { fieldPath: 'tags', arrayConfig: 'CONTAINS' },
        ],
      },
      {
        collectionGroup: 'docs',
        fields: [
          { fieldPath: 'status', order: 'ASCENDING' },
          { fieldPath: 'missing', order: 'ASCENDING' },
        ],
      },
    ],
    fieldOverrides: [
      { collectionGroup: 'docs', fieldPath: 'payload', indexes: [] },
      { collectionGroup: 'docs', fieldPath: 'meta.hidden', indexes: [] },
      { collectionGroup: 'docs', fieldPath: 'onlyAsc', indexes: [{ order: 'ASCENDING', queryScope: 'COLLECTION' }] },
    ],
  };
  const s = (v: string): WireValue => ({ stringValue: v });
  const fields: Record<string, WireValue> = {
    status: s('OPEN'), // 2
    tags: { arrayValue: { values: [s('a'), s('b'), s('a')] } }, // 2 distinct elements
    meta: { mapValue: { fields: { x: s('1'), y: { nullValue: 'NULL_VALUE' }, hidden: s('no') } } }, // x, y: 4
    payload: { mapValue: { fields: { big: s('exempt') } } }, // 0
    onlyAsc: s('z'), // 1
  };
  // 2 + 2 + 4 + 0 + 1 single-field, + 2 for the (status, tags) composite (one per distinct tag), + 0 for the one with a missing field.
  expect(indexEntries(config, 'docs', fields)).toBe(11);
  expect(indexEntries(config, 'elsewhere', fields)).toBe(2 + 2 + 6 + 2 + 2);
});
