import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { createLogger } from '../../functions/src/log';
import { createStartProcessHandler } from '../../functions/src/process/start-process';
import type { JobQueue } from '../../functions/src/tasks/job-queue';
import { commitFaults } from '../support/commit-faults';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';

/**
 * A start whose commit lands but whose answer is lost: the Firestore client
 * runs the transaction again and finds the instance. Without a request id on
 * the instance that re-run took it for someone else's start: 200
 * `created: false`, and the hand-over job waited for the sweep.
 */
const db = freshFirestores()('start-landed');
const enqueued: string[] = [];
const queue: JobQueue = {
  enqueue: async (id) => {
    enqueued.push(id);
    return 'CREATED';
  },
};

beforeAll(async () => {
  const engine = await fixtureEngine();
  http(
    'startLanded',
    createStartProcessHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => queue,
      timerQueue: () => queue,
      log: createLogger(() => undefined),
      now: () => new Date(),
    }),
  );
});

test('a re-run after a landed commit answers 201 and dispatches the start job, once per start', async () => {
  const faults = commitFaults(db);
  try {
    faults.afterLanding(() => true, { kind: 'UNAVAILABLE' });
    const body = { processKey: 'fixture-process', businessKey: 'C-landed-1', variables: { caseId: 'C-landed-1' } };
    const first = await request(getTestServer('startLanded')).post('/').send(body);
    expect(faults.fired()).toBe(1);
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);
    expect(enqueued).toHaveLength(1);
    // A second request is someone else's start: 200, nothing dispatched again.
    const second = await request(getTestServer('startLanded')).post('/').send(body);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ created: false, processInstanceId: first.body.processInstanceId });
    expect(enqueued).toHaveLength(1);
  } finally {
    faults.restore();
  }
});
