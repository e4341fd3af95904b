import request from 'supertest';
import { stableId } from '../../functions/src/core/hash';
import { INBOX } from '../../functions/src/inbox/document';
import { messageDocId } from '../../functions/src/inbox/ids';
import { PROCESSED } from '../../functions/src/inbox/processed';
import { freshFirestores } from '../support/firestore';
import { completionEnvelope } from '../support/push';
import { createLogger } from '../../functions/src/log';
import { logMetric, unmetTerms } from '../support/log-filter';
import { testReceiver } from '../support/receiver';

/**
 * The dedup identity is (message name, correlation key, dedup key): a sender
 * that reuses an eventId for two cases sends two events, not a
 * collision. Documents stored before this scheme keep their ids
 * (`id(["message", name, dedupKey])`) and still deduplicate.
 */
const firestore = freshFirestores();
const db = firestore('dedup-scope');
const { server } = testReceiver(db);
const inbox = db.collection(INBOX);
const push = async (body: Record<string, unknown>): Promise<Record<string, unknown>> =>
  (await request(server).post('/').send(body)).body as Record<string, unknown>;

/** The id scheme before the correlation key was part of it (docs/data-model.md, "Ids stored before"). */
const legacyId = (dedupKey: string): string => stableId('message', 'TaskCompleted', dedupKey);

/** Writes what the previous receiver wrote for a message: an OPEN or DONE document under the old id. */
async function storedBeforeUpgrade(body: Record<string, unknown>, status: 'OPEN' | 'DONE'): Promise<string> {
  // The document the receiver writes, from a project of its own, then copied under the old id.
  const scratch = firestore('dedup-scope-before');
  const res = (await request(testReceiver(scratch).server).post('/').send(body)).body as { id: string };
  const data = (await scratch.collection(INBOX).doc(res.id).get()).data() ?? {};
  const id = legacyId(String(data.dedupKey));
  await inbox.doc(id).set({
    ...data,
    status,
    ...(status === 'DONE'
      ? { processInstanceId: 'i-before', processedAt: new Date(), expireAt: new Date(Date.now() + 7 * 86_400_000) }
      : {}),
  });
  return id;
}

describe('the dedup identity is scoped by message name and correlation key', () => {
  test('one eventId reused for two cases: two events, both stored OPEN, no KEY_COLLISION', async () => {
    const a = await push(completionEnvelope({ caseId: 'C-scope-a', eventId: 'evt-reused', completedItems: 1 }));
    const b = await push(completionEnvelope({ caseId: 'C-scope-b', eventId: 'evt-reused', completedItems: 2 }));
    expect(a).toMatchObject({
      outcome: 'stored',
      status: 'OPEN',
      id: messageDocId('TaskCompleted', 'C-scope-a', 'evt-reused'),
    });
    expect(b).toMatchObject({
      outcome: 'stored',
      status: 'OPEN',
      id: messageDocId('TaskCompleted', 'C-scope-b', 'evt-reused'),
    });
    expect(a.id).not.toBe(b.id);
    expect((await inbox.where('reason', '==', 'KEY_COLLISION').get()).size).toBe(0);
  });

  test('the same eventId, key and payload again is still a duplicate; another payload is still a KEY_COLLISION', async () => {
    const first = await push(completionEnvelope({ caseId: 'C-scope-c', eventId: 'evt-c' }));
    expect(await push(completionEnvelope({ caseId: 'C-scope-c', eventId: 'evt-c' }))).toEqual({
      outcome: 'duplicate',
      id: first.id,
    });
    expect(await push(completionEnvelope({ caseId: 'C-scope-c', eventId: 'evt-c', completedItems: 9 }))).toMatchObject({
      reason: 'KEY_COLLISION',
      collidesWith: first.id,
    });
  });
});

describe('a KEY_COLLISION is parked once', () => {
  test('its redelivery answers duplicate and is not counted again by inbox_documents_parked (it may have been admitted since)', async () => {
    const logs: Array<Record<string, unknown>> = [];
    // The function name comes from the logger's base fields, as in functions/src/wiring.ts.
    const counted = testReceiver(db, {
      log: createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>), { function: 'receivePubSubPush' }),
    });
    // The metric's receiver clause (its filter ORs one clause per function; log-filter evaluates conjunctions only).
    const clause = /\((jsonPayload\.function="receivePubSubPush"[^)]*)\)/.exec(
      logMetric('inbox_documents_parked').filter,
    )?.[1];
    expect(clause).toContain('jsonPayload.outcome="parked"');
    const countedByMetric = (l: Record<string, unknown>): boolean => unmetTerms(clause ?? '', l).length === 0;
    await request(counted.server)
      .post('/')
      .send(completionEnvelope({ caseId: 'C-park-once', eventId: 'evt-p' }));
    const second = completionEnvelope({ caseId: 'C-park-once', eventId: 'evt-p', completedItems: 8 });
    const first = (await request(counted.server).post('/').send(second)).body as Record<string, unknown>;
    const again = (await request(counted.server).post('/').send(second)).body as Record<string, unknown>;
    expect(first).toMatchObject({ reason: 'KEY_COLLISION' });
    expect(again).toEqual({ outcome: 'duplicate', id: first.id });
    expect(logs.filter((l) => l.inboxId === first.id && countedByMetric(l))).toHaveLength(1);
  });
});

describe('documents stored under the previous id scheme keep working', () => {
  test('a redelivery of a message stored before the upgrade (OPEN) is a duplicate of that document: no second document', async () => {
    const body = completionEnvelope(
      { caseId: 'C-legacy-open', eventId: 'evt-legacy-open' },
      { messageId: 'm-legacy-open' },
    );
    const id = await storedBeforeUpgrade(body, 'OPEN');
    expect(await push(body)).toEqual({ outcome: 'duplicate', id });
    expect((await inbox.where('correlationKey', '==', 'C-legacy-open').get()).size).toBe(1);
  });

  test('a different payload under the old id and the same key is a KEY_COLLISION pointing at the old document', async () => {
    const id = await storedBeforeUpgrade(completionEnvelope({ caseId: 'C-legacy-k', eventId: 'evt-legacy-k' }), 'DONE');
    expect(
      await push(completionEnvelope({ caseId: 'C-legacy-k', eventId: 'evt-legacy-k', completedItems: 77 })),
    ).toMatchObject({ reason: 'KEY_COLLISION', collidesWith: id });
  });

  test('an old document of another case under the same eventId does not block this one', async () => {
    await storedBeforeUpgrade(completionEnvelope({ caseId: 'C-legacy-x', eventId: 'evt-legacy-shared' }), 'DONE');
    const res = await push(completionEnvelope({ caseId: 'C-legacy-y', eventId: 'evt-legacy-shared' }));
    expect(res).toMatchObject({
      outcome: 'stored',
      status: 'OPEN',
      id: messageDocId('TaskCompleted', 'C-legacy-y', 'evt-legacy-shared'),
    });
  });

  test("a message processed under the old id, whose DONE document is gone, is still a duplicate through that id's record", async () => {
    const body = completionEnvelope({ caseId: 'C-legacy-gone', eventId: 'evt-legacy-gone' });
    const id = await storedBeforeUpgrade(body, 'DONE');
    const payloadHash = (await inbox.doc(id).get()).get('payloadHash') as string;
    // What the relay writes when it finishes an old document after the upgrade; then the TTL takes the document.
    await db
      .collection(PROCESSED)
      .doc(id)
      .set({
        messageName: 'TaskCompleted',
        correlationKey: 'C-legacy-gone',
        payloadHash,
        processedAt: new Date(),
        processInstanceId: 'i-before',
        correlatedVia: 'RELAY',
        expireAt: new Date(Date.now() + 31 * 86_400_000),
      });
    await inbox.doc(id).delete();
    expect(await push(body)).toEqual({ outcome: 'duplicate', id });
    expect((await inbox.where('correlationKey', '==', 'C-legacy-gone').get()).size).toBe(0);
  });
});
