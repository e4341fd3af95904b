import type { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { relayBatch, type RelaySummary } from '../../functions/src/relay/relay-batch';
import type { RelayDeps } from '../../functions/src/relay/relay-one';
import { runPool } from '../support/pool';
import { roundsEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { NO_QUEUES } from '../support/queues';

const KEYS = 200;
const ROUNDS = 5; // rounds.bpmn: 5 x (ExecutionStarted, TaskCompleted) per key = 2,000 documents
const RELAYS = 4;
const db = freshFirestores()('relay-concurrency');
let engine: Engine;

beforeAll(async () => {
  engine = await roundsEngine();
});

test(`${RELAYS} concurrent relays over ${KEYS * ROUNDS * 2} documents for ${KEYS} keys, each pair delivered in reverse: every message correlated exactly once, in order`, async () => {
  const base = Date.now() - 3_600_000;
  const instanceOf: string[] = [];
  await runPool(KEYS, 16, async (k) => {
    instanceOf[k] = (
      await startProcessInstance(db, engine, {
        processKey: 'rounds',
        businessKey: `K-${k}`,
        variables: { caseId: `K-${k}` },
        now: new Date(),
      })
    ).instance.id;
  });
  // Per key and round: "started" is published first, "completed" second, but completed is received first.
  const messages = Array.from({ length: KEYS * ROUNDS }, (_, n) => ({ k: n % KEYS, r: Math.floor(n / KEYS) }));
  /** Per key, per round: the inbox ids in publish order (started, completed). */
  const published: Array<Array<[string, string]>> = Array.from({ length: KEYS }, () => []);
  await runPool(messages.length, 32, async (n) => {
    const { k, r } = messages[n]!;
    const key = `K-${k}`;
    const at = base + r * 10_000;
    const completed = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload(key, { eventId: `c-${k}-${r}` }),
      publishTime: new Date(at + 1_000),
      receivedAt: new Date(at + 2_000),
    });
    const started = await storePushed(db, {
      name: 'ExecutionStarted',
      payload: { caseId: key, eventId: `s-${k}-${r}` },
      publishTime: new Date(at),
      receivedAt: new Date(at + 3_000),
    });
    published[k]![r] = [started, completed];
  });
  expect((await db.collection(INBOX).where('status', '==', 'OPEN').count().get()).data().count).toBe(KEYS * ROUNDS * 2);

  const log = createLogger(() => undefined);
  const deps: RelayDeps = {
    db,
    engine,
    policy: { backoffBaseMs: 100, backoffCapMs: 1_000, bufferWindowMs: 24 * 3_600_000, errorAfterAttempts: 3 },
    retentionMs: 3_600_000,
    transactionTimeoutMs: 30_000,
    now: () => new Date(),
    random: Math.random,
  };
  const summaries: RelaySummary[] = [];
  // Like the scheduler: calls keep coming, four at a time, until nothing is open.
  for (let call = 0; call < 20; call++) {
    const batch = await Promise.all(
      Array.from({ length: RELAYS }, () =>
        relayBatch(deps, NO_QUEUES, log, { budgetMs: 60_000, parallelism: 8, batchSize: 400, shards: 16 }),
      ),
    );
    summaries.push(...batch);
    if ((await db.collection(INBOX).where('status', '==', 'OPEN').count().get()).data().count === 0) break;
  }

  const docs = await db.collection(INBOX).get();
  expect(docs.size).toBe(KEYS * ROUNDS * 2);
  expect(docs.docs.filter((d) => d.get('status') !== 'DONE').map((d) => d.id)).toEqual([]);
  // Never tried out of order: no document needed a second attempt.
  expect(docs.docs.filter((d) => d.get('attempts') !== 0).length).toBe(0);
  const handled = summaries.reduce((n, s) => n + s.correlated + s.consumedFromBuffer, 0);
  expect(handled).toBe(KEYS * ROUNDS * 2);
  expect(summaries.reduce((n, s) => n + s.retried + Object.keys(s.parked).length, 0)).toBe(0);
  // Exactly once: every instance counted exactly five rounds and ended.
  const instances = await db.collection(COLLECTIONS.instances).get();
  expect(instances.size).toBe(KEYS);
  expect(
    instances.docs.filter((d) => d.get('status') !== 'COMPLETED' || d.get('variables.rounds') !== ROUNDS).length,
  ).toBe(0);
  // Exactly once and in order, per key: the instance's audit trail (the last 100 correlated inbox ids, here 10)
  // lists exactly the key's inbox ids, each once, in publish order, whether the relay or the buffer delivered them.
  const trail = new Map(instances.docs.map((d) => [d.id, d.get('correlatedMessages') as unknown]));
  const wrong = instanceOf.flatMap((instanceId, k) => {
    const expected = published[k]!.flat();
    expect(expected).toHaveLength(ROUNDS * 2);
    return JSON.stringify(trail.get(instanceId)) === JSON.stringify(expected)
      ? []
      : [{ key: `K-${k}`, expected, got: trail.get(instanceId) }];
  });
  expect(wrong).toEqual([]);
}, 300_000);
