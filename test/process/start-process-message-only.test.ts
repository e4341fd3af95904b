import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { join } from 'node:path';
import request from 'supertest';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { createLogger } from '../../functions/src/log';
import { createStartProcessHandler } from '../../functions/src/process/start-process';
import type { JobQueue } from '../../functions/src/tasks/job-queue';
import { REPO_ROOT } from '../support/engine';
import { freshFirestores } from '../support/firestore';

/**
 * startProcess starts at a none start event only: a process that starts by
 * message (test/fixtures/bpmn/fixture-opening.bpmn) is refused with 422,
 * naming the process and its message start events, and nothing is written.
 */
const noQueue: JobQueue = { enqueue: async () => 'CREATED' };
const db = freshFirestores()('start-message-only');
let server: ReturnType<typeof getTestServer>;

beforeAll(async () => {
  const model = await loadProcessModel(join(REPO_ROOT, 'test', 'fixtures', 'bpmn', 'fixture-opening.bpmn'));
  const engine = new Engine([model], {}, new Set(['handOver', 'settle']));
  http(
    'startProcessMessageOnly',
    createStartProcessHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => noQueue,
      timerQueue: () => noQueue,
      log: createLogger(() => undefined),
      now: () => new Date(),
    }),
  );
  server = getTestServer('startProcessMessageOnly');
});

test('a process without a none start event: 422, the process and its message start events named, no instance', async () => {
  const res = await request(server)
    .post('/')
    .send({ processKey: 'fixture-opening', businessKey: 'C-m1', variables: { caseId: 'C-m1' } });
  expect(res.status).toBe(422);
  expect(res.body).toEqual({
    error:
      'process fixture-opening has no none start event: it starts by message only, at opened (message TaskOpened); publish that message (its correlation key becomes the business key) instead of calling startProcess',
    processKey: 'fixture-opening',
    messageStartEvents: [{ id: 'opened', messageName: 'TaskOpened' }],
  });
  expect(res.body).not.toHaveProperty('retry');
  expect((await db.collection(COLLECTIONS.instances).get()).size).toBe(0);
});
