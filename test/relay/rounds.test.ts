import type { Engine } from '../../functions/src/engine/engine';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import type { RelayDeps } from '../../functions/src/relay/relay-one';
import { workOrderEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { NO_QUEUES } from '../support/queues';

/**
 * The relay's rounds: the next round's candidate query starts while the last
 * documents of a round are still in flight (relay-batch.ts), so it can list
 * only those documents again. A round must not then end the call while a
 * backlog waits behind them: it asks again once they are settled.
 */
const { db } = freshFirestores().project('relay-rounds');
const policy: RelayPolicy = { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * 3_600_000, errorAfterAttempts: 3 };
let engine: Engine;
beforeAll(async () => {
  engine = await workOrderEngine();
});
const deps = (): RelayDeps => ({ db, engine, policy, retentionMs: 7 * 86_400_000, transactionTimeoutMs: 10_000, now: () => new Date(), random: () => 0.5 });

test('one call works through a backlog larger than a page, though each early query lists only the documents in flight', async () => {
  // No work order waits for these: each is held in the buffer (a retry later), which moves it out of the candidates.
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push(await storePushed(db, { name: 'WorkOrderCompleted', payload: completionPayload(`WO-rounds-${i}`) }));
  // One shard, a page of two, two workers: both documents of a page are in flight when the early query runs.
  const summary = await relayBatch(deps(), NO_QUEUES, createLogger(() => undefined), { budgetMs: 30_000, parallelism: 2, batchSize: 2, shards: 1 });
  const docs = await Promise.all(ids.map(async (id) => (await db.collection(INBOX).doc(id).get()).data() ?? {}));
  expect(docs.filter((d) => d.lastAttemptAt === undefined)).toEqual([]);
  expect(summary.rounds).toBeGreaterThanOrEqual(3);
});
