import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { createLogger } from '../../functions/src/log';
import { createRelayHandler } from '../../functions/src/relay/relay-inbox';
import { readGauges } from '../../functions/src/relay/gauges';
import { relayOne } from '../../functions/src/relay/relay-one';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';

/**
 * The level gauges the alert policies read (PARKED documents, instances in
 * INCIDENT, FAILED jobs): counted from Firestore whatever logged or did not
 * log their arrival, and carried by the relay's "relay summary" line.
 */
const { db, projectId } = freshFirestores().project('gauge-levels');
let engine: Engine;

beforeAll(async () => {
  engine = await fixtureEngine();
});

async function seed(): Promise<void> {
  // PARKED / NO_WAITING_INSTANCE: relayed after the buffer window with nobody waiting.
  const parked = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-gauge-parked') });
  await relayOne(
    {
      db,
      engine,
      policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 },
      retentionMs: 86_400_000,
      transactionTimeoutMs: 20_000,
      now: () => new Date(Date.now() + 25 * 3_600_000),
      random: () => 0.5,
    },
    parked,
  );
  // A job out of attempts: the job FAILED, its instance INCIDENT / JOB_FAILED.
  const failing = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: 'C-gauge-failed',
    variables: { caseId: 'C-gauge-failed' },
    now: new Date(),
  });
  expect((await recordJobFailure(db, failing.jobs[0]!, 'provider down', 1, new Date())).status).toBe('FAILED');
  // A second waiting point forced by an operator (`repair move-token --force`): INCIDENT / DUPLICATE_WAITING_POINT, logged nowhere but the operator's terminal.
  const twin = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: 'C-gauge-twin',
    variables: { caseId: 'C-gauge-twin' },
    now: new Date(),
  });
  await completeJobRun(db, engine, twin.jobs[0]!, {}, new Date());
  await moveToken(db, engine, {
    processInstanceId: twin.instance.id,
    executionId: null,
    activityId: 'waitForCompletion',
    force: true,
    now: new Date(),
  });
}

describe('relay gauges of open incidents and failed jobs', () => {
  test('an empty inbox: every level is 0, no oldest OPEN document', async () => {
    expect(await readGauges(db, 16, new Date())).toEqual({
      open: 0,
      parked: 0,
      openIncidents: 0,
      failedJobs: 0,
      oldestOpenAgeSeconds: null,
    });
  });

  test('count what is there now, and the scheduled relay call logs them in its summary', async () => {
    await seed();
    expect(await readGauges(db, 16, new Date())).toEqual({
      open: 0,
      parked: 1,
      openIncidents: 2,
      failedJobs: 1,
      oldestOpenAgeSeconds: null,
    });

    const logs: Array<Record<string, unknown>> = [];
    const enqueued: string[] = [];
    http(
      'relayGaugeLevels',
      createRelayHandler({
        db: () => db,
        engine: async () => engine,
        queue: () => ({
          enqueue: async (id) => {
            enqueued.push(id);
            return 'CREATED';
          },
        }),
        timerQueue: () => ({
          enqueue: async (id) => {
            enqueued.push(id);
            return 'CREATED';
          },
        }),
        log: createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>)),
        relay: loadConfig({ GOOGLE_CLOUD_PROJECT: projectId, INBOX_PUSH_AUTH: 'disabled' }).relay,
        shards: 16,
        now: () => new Date(),
        random: Math.random,
      }),
    );
    const res = await request(getTestServer('relayGaugeLevels')).post('/').send({});
    expect(res.status).toBe(200);
    const summary = logs.find((l) => l.message === 'relay summary');
    // The log-based metrics inbox_gauge_open_incidents and inbox_gauge_failed_jobs extract exactly these fields.
    expect(summary?.gauges).toMatchObject({ parked: 1, openIncidents: 2, failedJobs: 1 });
    expect(res.body.gauges).toMatchObject({ openIncidents: 2, failedJobs: 1 });
    expect(enqueued).toEqual([]);
  });
});
