/**
 * One poisoned key among many (issue 39): a message whose step the engine
 * cannot apply (here: its token waits at a node the deployed model no
 * longer has, as a model changed under a waiting instance leaves it) must
 * not hold the others back, and must end PARKED with its reason after a
 * bounded number of attempts, never retried without end.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { type RelayPolicy, STEP_FAILURE_ATTEMPTS } from '../../functions/src/relay/decide';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import type { RelayDeps } from '../../functions/src/relay/relay-one';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { tokensOf } from '../support/process-state';

const policy: RelayPolicy = {
  backoffBaseMs: 60_000,
  backoffCapMs: 600_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const fresh = freshFirestores();
const { db } = fresh.project('relay-poison');
let engine: Engine;
const logs: Array<Record<string, unknown>> = [];
const log = createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>));
const noQueue = {
  jobs: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
  timers: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
};

beforeAll(async () => {
  engine = await fixtureEngine();
});

const deps = (now: Date): RelayDeps => ({
  db,
  engine,
  policy,
  retentionMs: 7 * 24 * 3_600_000,
  transactionTimeoutMs: 20_000,
  now: () => now,
  random: () => 0.5,
});
const batch = (now: Date) =>
  relayBatch(deps(now), noQueue, log, {
    budgetMs: 120_000,
    parallelism: 8,
    batchSize: 400,
    shards: 16,
    clock: () => now.getTime(),
  });

/** A case whose token waits at "Wait for completion". */
async function waiting(database: Firestore, caseId: string): Promise<string> {
  const started = await startProcessInstance(database, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobRun(database, engine, started.jobs[0]!, {}, new Date());
  return started.instance.id;
}

test('199 keys correlate in the round that meets the poisoned one; it is PARKED STEP_FAILED after its attempts', async () => {
  const keys = Array.from({ length: 200 }, (_, i) => `C-poison-${String(i).padStart(3, '0')}`);
  const instances: string[] = [];
  for (let i = 0; i < keys.length; i += 20)
    instances.push(...(await Promise.all(keys.slice(i, i + 20).map((k) => waiting(db, k)))));
  // The poisoned instance: its token waits at a node the deployed model does not have (renamed by a deploy).
  const poisonedInstance = instances[117] as string;
  const token = (await tokensOf(db, poisonedInstance)).find((t) => t.status === 'WAITING_MESSAGE');
  await refs.instance(db, poisonedInstance).update({ [`tokens.${token?.id ?? ''}.activityId`]: 'awaitCompletionV2' });
  const ids = await Promise.all(
    keys.map((k) => storePushed(db, { name: 'TaskCompleted', payload: completionPayload(k) })),
  );
  const poisoned = ids[117] as string;

  const first = await batch(new Date());
  expect(first.correlated).toBe(199);
  expect(first.technicalFailures).toBe(1);
  expect(first.rounds).toBeGreaterThanOrEqual(1);
  const after1 = (await db.collection(INBOX).doc(poisoned).get()).data() ?? {};
  expect(after1).toMatchObject({ status: 'OPEN', attempts: 1 });
  expect(String(after1.lastError)).toMatch(
    /^STEP_FAILED: delivering TaskCompleted at waitForCompletion: .*has no node awaitCompletionV2/,
  );

  // Each later call finds it due again (its backoff passed); the last of its attempts parks it.
  for (let attempt = 2; attempt <= STEP_FAILURE_ATTEMPTS; attempt++)
    await batch(new Date(Date.now() + attempt * 3_600_000));
  const parked = (await db.collection(INBOX).doc(poisoned).get()).data() ?? {};
  expect(parked).toMatchObject({ status: 'PARKED', reason: 'STEP_FAILED', attempts: STEP_FAILURE_ATTEMPTS });
  expect(String(parked.lastError)).toMatch(/could not apply this message, 3 attempts: .*has no node awaitCompletionV2/);
  expect(logs.some((l) => l.message === 'inbox document parked' && l.reason === 'STEP_FAILED')).toBe(true);
  // Nothing of it was applied: the instance still waits, its variables untouched.
  const stored = (await refs.instance(db, poisonedInstance).get()).data() ?? {};
  expect(stored.status).toBe('RUNNING');
  expect(stored.variables).not.toHaveProperty('completedItems');
  // Every other instance moved on.
  const moved = await Promise.all(
    instances
      .filter((i) => i !== poisonedInstance)
      .map(async (i) => (await refs.instance(db, i).get()).get('variables.completedItems')),
  );
  expect(moved.every((v) => v === 5)).toBe(true);
});
