import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { runPool } from '../support/pool';
import { REPO_ROOT, fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { waitFor } from '../support/wait';
import { NO_QUEUES } from '../support/queues';
import { jobsOf, tokensOf } from '../support/process-state';
import { instanceJobs } from '../../functions/src/engine/store/instance-doc';
import { waitingPointsOf } from '../support/waiting';

const ORDERS = 300;
const { db, projectId } = freshFirestores().project('relay-crash');
let engine: Engine;

beforeAll(async () => {
  engine = await fixtureEngine();
});

const doneCount = async (): Promise<number> =>
  (await db.collection(INBOX).where('status', '==', 'DONE').count().get()).data().count;

/** For one case: the inbox document is DONE exactly when the process has moved past the catch event. */
async function consistent(caseId: string, inboxId: string): Promise<string | null> {
  const [inbox, instanceSnap] = await Promise.all([
    db.collection(INBOX).doc(inboxId).get(),
    db.collection(COLLECTIONS.instances).where('businessKey', '==', caseId).get(),
  ]);
  const instance = instanceSnap.docs[0];
  if (instance === undefined) return `${caseId}: no instance`;
  const activity = (await tokensOf(db, instance.id))[0]?.activityId;
  const subscriptions = (await waitingPointsOf(db, instance.id, caseId)).length;
  const jobs = (await jobsOf(db, instance.id)).filter((j) => j.activityId === 'settle').length;
  const done = inbox.get('status') === 'DONE';
  const moved =
    activity === 'settle' && subscriptions === 0 && jobs === 1 && instance.get('variables.completedItems') === 9;
  const waiting = activity === 'waitForCompletion' && subscriptions === 1 && jobs === 0;
  if (done && moved) return null;
  if (!done && inbox.get('status') === 'OPEN' && waiting) return null;
  return `${caseId}: inbox ${String(inbox.get('status'))}, token at ${activity}, ${subscriptions} subscriptions, ${jobs} settlement jobs`;
}

test('a relay killed mid-batch (SIGKILL) leaves nothing half-done; the next relay finishes the rest', async () => {
  const ids = new Map<string, string>();
  await runPool(ORDERS, 16, async (i) => {
    const caseId = `C-crash-${i}`;
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: caseId,
      variables: { caseId },
      now: new Date(),
    });
    await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
    ids.set(
      caseId,
      await storePushed(db, { name: 'TaskCompleted', payload: completionPayload(caseId, { completedItems: 9 }) }),
    );
  });

  // One node process (tsx as a loader, not its CLI, which would run the script in a grandchild), in its own group.
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test', 'support', 'relay-child.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, RELAY_PROJECT: projectId },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await waitFor(
      'the child relay to correlate some documents',
      async () => ((await doneCount()) >= 30 ? true : undefined),
      { timeoutMs: 60_000, everyMs: 20 },
    );
  } finally {
    process.kill(-(child.pid ?? 0), 'SIGKILL');
    await exited;
  }
  const doneAtKill = await doneCount();
  expect(doneAtKill).toBeGreaterThanOrEqual(30);
  expect(doneAtKill).toBeLessThan(ORDERS);

  // Every case is either fully correlated or untouched: no inbox DONE without the token moved, or the reverse.
  const problems = (await Promise.all([...ids].map(([key, id]) => consistent(key, id)))).filter((p) => p !== null);
  expect(problems).toEqual([]);

  // The next relay picks up the rest; each case ends with exactly one settlement job.
  const deps = {
    db,
    engine,
    policy: { backoffBaseMs: 100, backoffCapMs: 1_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 },
    retentionMs: 3_600_000,
    transactionTimeoutMs: 30_000,
    now: () => new Date(),
    random: Math.random,
  };
  // Calls keep coming, as from the scheduler: a document whose lock the killed relay still held is retried after its backoff.
  await waitFor(
    'every document DONE',
    async () => {
      await relayBatch(
        deps,
        NO_QUEUES,
        createLogger(() => undefined),
        { budgetMs: 60_000, parallelism: 8, batchSize: 400, shards: 16 },
      );
      return (await doneCount()) === ORDERS ? true : undefined;
    },
    { timeoutMs: 120_000, everyMs: 200 },
  );
  expect(await doneCount()).toBe(ORDERS);
  const instances = await db.collection(COLLECTIONS.instances).get();
  const settlementJobs = instances.docs.flatMap((d) => instanceJobs(d.data()).filter((j) => j.activityId === 'settle'));
  expect(settlementJobs).toHaveLength(ORDERS);
  expect(new Set(settlementJobs.map((j) => j.processInstanceId)).size).toBe(ORDERS);
  expect((await refs.correlationKey(db, 'C-crash-0').get()).exists).toBe(false);
}, 240_000);
