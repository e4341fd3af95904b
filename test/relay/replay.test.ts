import request from 'supertest';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { PROCESSED } from '../../functions/src/inbox/processed';
import { createLogger } from '../../functions/src/log';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import type { RelayDeps } from '../../functions/src/relay/relay-one';
import { roundsEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { TEST_REGISTRY } from '../support/inbox';
import { base64Json, completion, envelope } from '../support/push';
import { testDeadLetterReceiver, testReceiver } from '../support/receiver';
import { expireAsTtlWould } from '../support/ttl';
import { NO_QUEUES } from '../support/queues';

/**
 * Dedup that outlives a replay. Pub/Sub can bring messages back for up to
 * 31 days (a seek on a subscription that retains acked messages, a
 * snapshot); a DONE document expires after 7. The replay here pushes the very
 * same envelopes again after the DONE documents' TTL has run; through the
 * Pub/Sub emulator's seek: test/e2e/replay-seek.test.ts.
 */
const DAY = 86_400_000;
const db = freshFirestores()('replay');
const config = loadConfig({ GOOGLE_CLOUD_PROJECT: 'replay-test' });
let clock = Date.now();
const now = (): Date => new Date(clock);
const receiver = testReceiver(db, { registry: TEST_REGISTRY, now });
const deadLetters = testDeadLetterReceiver(db, { registry: TEST_REGISTRY, now });
let engine: Engine;
let deps: RelayDeps;

beforeAll(async () => {
  engine = await roundsEngine();
  // The relay as deployed with the default configuration: DONE kept 7 days, its record 31.
  deps = {
    db,
    engine,
    policy: config.relay.policy,
    retentionMs: config.relay.retentionMs,
    recordRetentionMs: config.relay.recordRetentionMs,
    transactionTimeoutMs: 20_000,
    now,
    random: () => 0.5,
  };
});

const started = (key: string, eventId: string, messageId: string): Record<string, unknown> =>
  envelope({ data: base64Json({ caseId: key, eventId }), attributes: { eventType: 'ExecutionStarted' }, messageId });
const completed = (key: string, eventId: string, messageId: string, completedItems = 3): Record<string, unknown> =>
  envelope({
    data: base64Json(completion({ caseId: key, eventId, completedItems })),
    attributes: { eventType: 'TaskCompleted' },
    messageId,
  });
const push = async (body: Record<string, unknown>): Promise<Record<string, unknown>> =>
  (await request(receiver.server).post('/').send(body)).body as Record<string, unknown>;
const relayAll = (): ReturnType<typeof relayBatch> =>
  relayBatch(
    deps,
    NO_QUEUES,
    createLogger(() => undefined),
    { budgetMs: 30_000, parallelism: 4, batchSize: 50, shards: 16 },
  );
const instanceOf = async (id: string): Promise<Record<string, unknown>> =>
  (await refs.instance(db, id).get()).data() ?? {};
const openOrParkedOf = async (key: string): Promise<string[]> =>
  (await db.collection(INBOX).where('correlationKey', '==', key).get()).docs.map(
    (d) => `${d.id} ${String(d.get('status'))}`,
  );

describe('a replay after the DONE documents expired changes nothing', () => {
  const key = 'C-replay';
  const round1 = [started(key, 's-1', 'm-s-1'), completed(key, 'c-1', 'm-c-1')];
  let instanceId: string;
  let ids: string[];

  beforeAll(async () => {
    instanceId = (
      await startProcessInstance(db, engine, {
        processKey: 'rounds',
        businessKey: key,
        variables: { caseId: key },
        now: now(),
      })
    ).instance.id;
    ids = [];
    for (const body of round1) ids.push(String((await push(body)).id));
    // "started" correlates; the token reaches "completed" and takes the completion from the inbox (the buffer).
    await relayAll();
  });

  test('round 1 is correlated, each DONE document has its processed record: payload hash, when, where, no payload', async () => {
    const instance = await instanceOf(instanceId);
    expect(instance).toMatchObject({ status: 'RUNNING', variables: { rounds: 1 }, correlatedMessages: ids });
    for (const [id, via] of [
      [ids[0], 'RELAY'],
      [ids[1], 'BUFFER'],
    ] as const) {
      const doc =
        (
          await db
            .collection(INBOX)
            .doc(id ?? '')
            .get()
        ).data() ?? {};
      const record =
        (
          await db
            .collection(PROCESSED)
            .doc(id ?? '')
            .get()
        ).data() ?? {};
      expect(doc).toMatchObject({ status: 'DONE', correlatedVia: via });
      expect(record).toEqual({
        messageName: doc.messageName,
        correlationKey: key,
        payloadHash: doc.payloadHash,
        processInstanceId: instanceId,
        correlatedVia: via,
        processedAt: doc.processedAt,
        expireAt: expect.anything(),
      });
      const processedAt = (doc.processedAt as FirebaseFirestore.Timestamp).toMillis();
      expect((doc.expireAt as FirebaseFirestore.Timestamp).toMillis() - processedAt).toBe(7 * DAY);
      expect((record.expireAt as FirebaseFirestore.Timestamp).toMillis() - processedAt).toBe(31 * DAY);
    }
  });

  test('8 days later the DONE documents are gone (TTL), the records are not; the same envelopes again: duplicates, nothing stored, nothing correlated', async () => {
    clock += 8 * DAY;
    const expired = await expireAsTtlWould(db, now());
    expect(expired).toMatchObject({ 'inbox.expireAt': 2, 'processedMessages.expireAt': 0 });
    const before = await instanceOf(instanceId);

    for (const [i, body] of round1.entries()) expect(await push(body)).toEqual({ outcome: 'duplicate', id: ids[i] });
    expect(
      receiver.logs.filter((l) => l.outcome === 'duplicate' && l.documentExists === false).map((l) => l.inboxId),
    ).toEqual(ids);
    expect(await openOrParkedOf(key)).toEqual([]);
    const summary = await relayAll();
    expect(summary.correlated).toBe(0);
    // Still in round 1, waiting for round 2's "started": the replayed "started" was not taken for it.
    const after = await instanceOf(instanceId);
    expect(after).toEqual(before);
    expect((await refs.correlationKey(db, key).get()).get('waiting')).toEqual([
      expect.objectContaining({ messageName: 'ExecutionStarted' }),
    ]);
  });

  test('a replayed id with another payload is a KEY_COLLISION against the record, a dead-lettered copy is recorded, not parked', async () => {
    const collision = await push(completed(key, 'c-1', 'm-c-1-other', 99));
    expect(collision).toMatchObject({ status: 'PARKED', reason: 'KEY_COLLISION', collidesWith: ids[1] });
    const res = await request(deadLetters.server)
      .post('/')
      .send(started(key, 's-1', 'm-s-1-dl'));
    expect(res.body).toEqual({ outcome: 'recorded', id: ids[0] });
    expect(await openOrParkedOf(key)).toEqual([`${String(collision.id)} PARKED`]);
  });

  test('the records go too, once INBOX_DEDUP_RETENTION_DAYS (31) have passed since processing', async () => {
    clock += 24 * DAY;
    expect(await expireAsTtlWould(db, now())).toMatchObject({ 'processedMessages.expireAt': 2 });
  });
});
