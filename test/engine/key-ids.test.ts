import type { Subscription } from '@google-cloud/pubsub';
import request from 'supertest';
import { recordId } from '../../functions/src/app';
import { refs } from '../../functions/src/engine/store/collections';
import { dispatchJobs } from '../../functions/src/jobs/dispatch';
import type { JobState } from '../../functions/src/engine/state';
import { createLogger } from '../../functions/src/log';
import { relayOne } from '../../functions/src/relay/relay-one';
import { freshFirestores } from '../support/firestore';
import { startProcessStack, subscribeCounterpart, type ProcessStack } from '../support/process-stack';
import { completionEnvelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';
import { SETTLEMENTS } from '../support/app';

/**
 * No business key or correlation key is used raw as a document id. Keys
 * here are what Firestore refuses (or misreads) as a document id: a slash
 * (a path), "." and "..", a reserved `__x__` name. Each goes the whole way:
 * startProcess (business key), the hand-over, the receiver (correlation
 * key), the relay, the settlement (caseId, the fixture app's recordId: a
 * hashed id, as an app's record ids are).
 */
const PROCESS = 'fixture-process';
const DAY = 86_400_000;
const log = createLogger(() => undefined);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('key-ids');
let stack: ProcessStack;
let counterpart: Subscription;

beforeAll(async () => {
  stack = await startProcessStack(db, projectId, { maxAttempts: 2 });
  counterpart = await subscribeCounterpart(stack);
});
firestore.beforeTerminate(async () => {
  await counterpart.close();
  await stack.stop();
});

const settlementsOf = async (caseId: string): Promise<Array<Record<string, unknown>>> =>
  (await db.collection(SETTLEMENTS).where('caseId', '==', caseId).get()).docs.map((d) => ({ id: d.id, ...d.data() }));
const settle = (caseId: string, instanceId: string): ReturnType<NonNullable<ProcessStack['handlers']['settle']>> =>
  stack.handlers.settle!({
    job: { id: `job-${instanceId}` } as JobState,
    instance: {
      id: instanceId,
      businessKey: caseId,
      variables: { caseId, completedItems: 1 },
    } as unknown as Parameters<NonNullable<ProcessStack['handlers']['settle']>>[0]['instance'],
    now: new Date(),
  });

describe('keys that are not document ids', () => {
  test.each([['C/7'], ['C/7/lines/2'], ['..'], ['.'], ['__C__']])(
    'case %j: started, handed over, completed through the receiver, relayed, settled once',
    async (caseId) => {
      const started = await request(stack.startServer)
        .post('/')
        .send({ processKey: PROCESS, businessKey: caseId, variables: { caseId } });
      expect(started.status).toBe(201);
      const instanceId = started.body.processInstanceId as string;
      await waitFor('the waiting point', async () =>
        ((await refs.correlationKey(db, caseId).get()).get('waiting') as unknown[] | undefined)?.length === 1
          ? true
          : undefined,
      );

      const stored = await request(testReceiver(db).server)
        .post('/')
        .send(completionEnvelope({ caseId, completedItems: 4 }));
      expect(stored.body).toMatchObject({ outcome: 'stored', status: 'OPEN' });
      const relayed = await relayOne(
        {
          db,
          engine: stack.engine,
          policy: { backoffBaseMs: 1_000, backoffCapMs: 60_000, bufferWindowMs: DAY, errorAfterAttempts: 3 },
          retentionMs: 7 * DAY,
          transactionTimeoutMs: 20_000,
          now: () => new Date(),
          random: () => 0.5,
        },
        stored.body.id as string,
      );
      if (relayed.kind !== 'DECIDED') throw new Error(`relay: ${relayed.kind}`);
      expect(relayed.decision).toMatchObject({ kind: 'DONE', processInstanceId: instanceId });
      await dispatchJobs(stack.queue, relayed.jobs, log);

      await waitFor('COMPLETED', async () =>
        (await refs.instance(db, instanceId).get()).get('status') === 'COMPLETED' ? true : undefined,
      );
      expect(await settlementsOf(caseId)).toEqual([
        expect.objectContaining({
          id: recordId('settlement', caseId),
          processInstanceId: instanceId,
          completedItems: 4,
        }),
      ]);
      // A re-run of the step bills nothing more.
      expect(await settle(caseId, instanceId)).toMatchObject({
        settlementId: recordId('settlement', caseId),
        settlementAlreadyExisted: true,
        settledByInstance: instanceId,
      });
      expect(await settlementsOf(caseId)).toHaveLength(1);
    },
  );
});
