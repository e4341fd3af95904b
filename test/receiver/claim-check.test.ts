import { createHash } from 'node:crypto';
import request from 'supertest';
import { canonicalJson } from '../../functions/src/core/hash';
import { correlationKeyDocId } from '../../functions/src/engine/ids';
import { offloadObjectName } from '../../functions/src/inbox/claim-check';
import { INBOX } from '../../functions/src/inbox/document';
import { collisionDocId, messageDocId } from '../../functions/src/inbox/ids';
import { processedRef } from '../../functions/src/inbox/processed';
import { createGcsPayloadStore } from '../../functions/src/storage/gcs-payload-store';
import { completionOfBytes } from '../support/claims';
import { freshFirestores } from '../support/firestore';
import { base64Json, envelope } from '../support/push';
import { TEST_CLAIMS, testReceiver } from '../support/receiver';
import { useTestStorage } from '../support/storage';
import { waitFor } from '../support/wait';

/**
 * The receiver's claim checks on the real emulators: Firestore, and the
 * storage emulator (packages/storage-emulator) behind the real adapter
 * (@google-cloud/storage). Offloaded payloads go to BUCKET; references may
 * name ALLOWED only.
 */
const BUCKET = TEST_CLAIMS.payloadBucket;
const ALLOWED = 'acme-reports';
const FOREIGN = 'foreign-reports';
const storage = useTestStorage([BUCKET, ALLOWED, FOREIGN]);
const firestore = freshFirestores();
const claims = { ...TEST_CLAIMS, referenceBuckets: [ALLOWED] };

const LIMIT = TEST_CLAIMS.offloadBytes;
const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/** The receiver on the real adapter, its Firestore client connected first (a cold client's first write can outlast a short deadline on a busy machine). */
async function receiverOn(
  db: FirebaseFirestore.Firestore,
  writeTimeoutMs = 5_000,
): Promise<ReturnType<typeof testReceiver>> {
  await db.collection(INBOX).doc('warm-up').get();
  const store = createGcsPayloadStore('claim-check-test');
  return testReceiver(db, { payloadStore: () => store, claims, writeTimeoutMs });
}

function push(
  payload: Record<string, unknown>,
  messageId: string,
  attributes: Record<string, string> = {},
): Record<string, unknown> {
  return envelope({ data: base64Json(payload), attributes: { eventType: 'TaskCompleted', ...attributes }, messageId });
}

const idOf = (caseId: string, eventId: string): string => messageDocId('TaskCompleted', caseId, eventId);
const objectsUnder = (id: string): string[] =>
  storage.current.emulator
    .objects(BUCKET)
    .map((o) => o.name)
    .filter((name) => name.startsWith(`payloads/${id}/`));

beforeEach(() => {
  storage.current.emulator.faults.clear();
  storage.current.emulator.clearRequests();
});

describe('offload at receipt', () => {
  test('a payload of exactly INBOX_OFFLOAD_BYTES stays inline; one byte more is offloaded, the object first', async () => {
    const db = firestore('offload-threshold');
    const receiver = await receiverOn(db);
    const at = completionOfBytes('C-at', LIMIT, { eventId: 'evt-at' });
    const over = completionOfBytes('C-over', LIMIT + 1, { eventId: 'evt-over' });

    const inline = await request(receiver.server).post('/').send(push(at, 'm-at'));
    expect(inline.status).toBe(200);
    const inlineDoc = (await db.collection(INBOX).doc(idOf('C-at', 'evt-at')).get()).data();
    expect(inlineDoc).toMatchObject({ status: 'OPEN', offloaded: null, payload: at });
    expect(objectsUnder(idOf('C-at', 'evt-at'))).toEqual([]);
    expect(storage.current.emulator.requests()).toEqual([]);

    const offloaded = await request(receiver.server).post('/').send(push(over, 'm-over'));
    expect(offloaded.body).toMatchObject({ outcome: 'stored', status: 'OPEN' });
    const id = idOf('C-over', 'evt-over');
    const doc = (await db.collection(INBOX).doc(id).get()).data();
    const hash = sha256(canonicalJson(over));
    expect(doc?.payloadHash).toBe(hash);
    expect(doc?.offloaded).toMatchObject({
      bucket: BUCKET,
      object: offloadObjectName(id, hash),
      bytes: LIMIT + 1,
      variable: 'caseReport',
    });
    expect(doc?.payload).toEqual({
      caseId: 'C-over',
      completedItems: over.completedItems,
      completionTimestamp: over.completionTimestamp,
      eventId: 'evt-over',
    });
    const [object] = storage.current.emulator.objects(BUCKET).filter((o) => o.name === offloadObjectName(id, hash));
    expect(object).toBeDefined();
    expect(sha256(object?.data ?? Buffer.alloc(0))).toBe(hash);
    expect(String(doc?.offloaded.generation)).toBe(String(object?.generation));
  });

  test('a redelivery of an offloaded message is a DUPLICATE and leaves one object', async () => {
    const db = firestore('offload-redelivery');
    const receiver = await receiverOn(db);
    const payload = completionOfBytes('C-again', LIMIT * 2, { eventId: 'evt-again' });
    const first = await request(receiver.server).post('/').send(push(payload, 'm-again'));
    expect(first.body.outcome).toBe('stored');
    const again = await request(receiver.server).post('/').send(push(payload, 'm-again'));
    expect(again.status).toBe(200);
    expect(again.body.outcome).toBe('duplicate');
    expect(objectsUnder(idOf('C-again', 'evt-again'))).toHaveLength(1);
    // The redelivery found its object (created: false) and deleted nothing.
    expect(storage.current.emulator.requests().filter((r) => r.op === 'delete')).toEqual([]);
  });

  test('a replay after the document was purged is a DUPLICATE; the object it had to create is left for `inbox repair orphan-payloads`', async () => {
    const db = firestore('offload-purged');
    const receiver = await receiverOn(db);
    const payload = completionOfBytes('C-purged', LIMIT * 2, { eventId: 'evt-purged' });
    const id = idOf('C-purged', 'evt-purged');
    await request(receiver.server).post('/').send(push(payload, 'm-purged'));
    // What the payload sweep leaves of a DONE offloaded message: its processed record, no object, no document.
    const stored = (await db.collection(INBOX).doc(id).get()).data();
    await storage.current.client.bucket(BUCKET).file(String(stored?.offloaded.object)).delete();
    await db.collection(INBOX).doc(id).delete();
    await processedRef(db, id).set({
      messageName: 'TaskCompleted',
      correlationKey: 'C-purged',
      payloadHash: stored?.payloadHash,
      processedAt: new Date(),
      processInstanceId: null,
      correlatedVia: 'RELAY',
      expireAt: new Date(Date.now() + 86_400_000),
    });
    storage.current.emulator.clearRequests();

    const replay = await request(receiver.server).post('/').send(push(payload, 'm-purged'));
    expect(replay.body).toMatchObject({ outcome: 'duplicate', id });
    // Never deleted on the ack path: "this call created it" does not prove no document names it (overlapping
    // deliveries: one answered 503 at its deadline and kept running while the other created the document).
    expect(objectsUnder(id)).toEqual([String(stored?.offloaded.object)]);
    expect(storage.current.emulator.requests().map((r) => `${r.op} ${r.status}`)).toEqual(['upload 200']);
    expect((await db.collection(INBOX).doc(id).get()).exists).toBe(false);
  });

  test('a second, different large payload under the same identity: KEY_COLLISION pointing at the object written for it, one upload', async () => {
    const db = firestore('offload-collision');
    const receiver = await receiverOn(db);
    const first = completionOfBytes('C-coll', LIMIT * 2);
    const second = completionOfBytes('C-coll', LIMIT * 2 + 10);
    const firstId = messageDocId('TaskCompleted', 'C-coll', 'TaskCompleted:C-coll');
    await request(receiver.server).post('/').send(push(first, 'm-coll-1'));
    const res = await request(receiver.server).post('/').send(push(second, 'm-coll-2'));
    const hash = sha256(canonicalJson(second));
    const collisionId = collisionDocId(firstId, hash);
    expect(res.body).toMatchObject({ outcome: 'stored', id: collisionId, reason: 'KEY_COLLISION' });
    // The object is named after the first id and the second payload's hash: no other payload shares it.
    expect((await db.collection(INBOX).doc(collisionId).get()).get('offloaded.object')).toBe(
      offloadObjectName(firstId, hash),
    );
    expect(objectsUnder(collisionId)).toEqual([]);
    expect(objectsUnder(firstId).sort()).toEqual(
      [offloadObjectName(firstId, sha256(canonicalJson(first))), offloadObjectName(firstId, hash)].sort(),
    );
  });
});

describe('storage failures at receipt are never acked', () => {
  test('an outage answers 503 with nothing stored; the redelivery is stored exactly once', async () => {
    const db = firestore('offload-outage');
    const receiver = await receiverOn(db);
    const payload = completionOfBytes('C-outage', LIMIT * 2, { eventId: 'evt-outage' });
    const id = idOf('C-outage', 'evt-outage');
    // More failures than the adapter's own retries: the receiver sees the outage.
    storage.current.emulator.faults.failNext(10, 503, (r) => r.op === 'upload');
    const res = await request(receiver.server).post('/').send(push(payload, 'm-outage'));
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ retry: true });
    expect((await db.collection(INBOX).doc(id).get()).exists).toBe(false);
    expect(objectsUnder(id)).toEqual([]);

    storage.current.emulator.faults.clear();
    const again = await request(receiver.server).post('/').send(push(payload, 'm-outage'));
    expect(again.body).toMatchObject({ outcome: 'stored', id });
    const third = await request(receiver.server).post('/').send(push(payload, 'm-outage'));
    expect(third.body.outcome).toBe('duplicate');
    expect((await db.collection(INBOX).where('correlationKey', '==', 'C-outage').get()).docs.map((d) => d.id)).toEqual([
      id,
    ]);
    expect(objectsUnder(id)).toHaveLength(1);
    const lane = (await db.collection('correlationKeys').doc(correlationKeyDocId('C-outage')).get()).get(
      'open',
    ) as unknown[];
    expect(lane).toHaveLength(1);
  });

  test('a slow store: a 10 MiB upload answers 503 within the write deadline, never a late 2xx', async () => {
    const db = firestore('offload-slow');
    const receiver = await receiverOn(db, 2_000);
    const payload = completionOfBytes('C-slow', 10 * 1024 * 1024 - 8_192, { eventId: 'evt-slow' });
    const stopSlow = storage.current.emulator.faults.slow(8_000, (r) => r.op === 'upload');
    const started = Date.now();
    const res = await request(receiver.server).post('/').send(push(payload, 'm-slow'));
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'DEADLINE_EXCEEDED', retry: true });
    // The deadline (2 s, reading the message included) plus sending and parsing 14 MB: far from the 8 s upload.
    expect(elapsed).toBeLessThan(5_000);
    stopSlow();
    // The abandoned upload still lands (as on the real service) and its document after it; the next delivery (a
    // receiver with the default deadline: reading 10 MiB alone takes this busy machine over a second) is stored once.
    const patient = await receiverOn(db, 8_000);
    const again = await waitFor(
      'a 2xx after the store is fast again',
      async () => {
        const r = await request(patient.server).post('/').send(push(payload, 'm-slow'));
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(['stored', 'duplicate']).toContain(again.body.outcome);
    expect(objectsUnder(idOf('C-slow', 'evt-slow'))).toHaveLength(1);
    expect((await db.collection(INBOX).where('correlationKey', '==', 'C-slow').get()).size).toBe(1);
  }, 60_000);
});

describe('references at receipt', () => {
  test('a reference into a foreign bucket is parked INVALID_PAYLOAD and never fetched', async () => {
    const db = firestore('reference-foreign');
    const receiver = await receiverOn(db);
    // The object exists and is readable: only the allow-list keeps the receiver away from it.
    const file = storage.current.client.bucket(FOREIGN).file('r/C-foreign.json');
    await file.save('{"lineItems":[]}', { resumable: false });
    const [metadata] = await file.getMetadata();
    const ref = `gs://${FOREIGN}/r/C-foreign.json#${String(metadata.generation)}`;
    storage.current.emulator.clearRequests();
    const res = await request(receiver.server)
      .post('/')
      .send(
        push(
          { caseId: 'C-foreign', completedItems: 1, completionTimestamp: '2026-11-29T10:00:00Z', report: ref },
          'm-foreign',
        ),
      );
    expect(res.body).toMatchObject({ outcome: 'stored', status: 'PARKED', reason: 'INVALID_PAYLOAD' });
    const doc = (
      await db
        .collection(INBOX)
        .doc(res.body.id as string)
        .get()
    ).data();
    expect(doc?.validationError).toContain(`bucket "${FOREIGN}"`);
    expect(doc?.validationError).toContain('INBOX_REFERENCE_BUCKETS');
    expect(storage.current.emulator.requests()).toEqual([]);
  });

  test('an allowed reference is stored on the OPEN document, unfetched', async () => {
    const db = firestore('reference-allowed');
    const receiver = await receiverOn(db);
    const ref = `gs://${ALLOWED}/r/C-ref.json#1712345678901234`;
    const res = await request(receiver.server)
      .post('/')
      .send(
        push({ caseId: 'C-ref', completedItems: 1, completionTimestamp: '2026-11-29T10:00:00Z' }, 'm-ref', {
          reportRef: ref,
        }),
      );
    expect(res.body).toMatchObject({ outcome: 'stored', status: 'OPEN' });
    const doc = (
      await db
        .collection(INBOX)
        .doc(res.body.id as string)
        .get()
    ).data();
    expect(doc?.reference).toEqual({
      bucket: ALLOWED,
      object: 'r/C-ref.json',
      generation: '1712345678901234',
      uri: ref,
      carriedIn: 'attribute',
      name: 'reportRef',
      variable: 'caseReport',
    });
    expect(storage.current.emulator.requests()).toEqual([]);
  });
});
