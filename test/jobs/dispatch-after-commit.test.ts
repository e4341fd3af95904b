import { join } from 'node:path';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { startCloudTasksEmulator, type CloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import request from 'supertest';
import { runCli } from '../../functions/src/cli/main';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { STORED } from '../../functions/src/engine/store/converters';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import type { TimerState } from '../../functions/src/engine/state';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { createLogger } from '../../functions/src/log';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import type { EnqueueOptions, JobQueue } from '../../functions/src/tasks/job-queue';
import { REPO_ROOT } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { FIXTURE_ENV, modelsDirWith } from '../support/app';

/**
 * Every caller that dispatches a commit's jobs dispatches its timers too
 * (Settled.timers): runJob, the relay and the CLI's repairs (startProcess and
 * fireTimer: test/e2e/timers.test.ts, test/jobs/fire-timer.test.ts). Each
 * timer's task is named after it and scheduled at its due time.
 */
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'bpmn');
const DAY = 24 * 3_600_000;
const dbs = freshFirestores();
let engine: Engine;

beforeAll(async () => {
  const models = await Promise.all(
    ['timer-paths.bpmn', 'message-then-timer.bpmn', 'deadline-gateway.bpmn'].map((f) =>
      loadProcessModel(join(FIXTURES, f)),
    ),
  );
  engine = new Engine(models, {}, new Set(['handOver', 'settle', 'escalate']), inboxBuffer(7 * DAY));
});

function recording(): JobQueue & { readonly calls: Array<{ id: string; options: EnqueueOptions | undefined }> } {
  const calls: Array<{ id: string; options: EnqueueOptions | undefined }> = [];
  return { calls, enqueue: async (id, options) => (calls.push({ id, options }), 'CREATED') };
}
const timerOf = async (db: FirebaseFirestore.Firestore, id: string): Promise<TimerState> =>
  (await refs.timer(db, id).withConverter(STORED).get()).data() as unknown as TimerState;

test('runJob: the finished job moves the token to a gateway with a timer branch; its task is created at the due time', async () => {
  const db = dbs('dispatch-run-job');
  const jobs = recording();
  const timers = recording();
  const started = await startProcessInstance(db, engine, {
    processKey: 'timer-paths',
    businessKey: 'C-dispatch-job',
    variables: { caseId: 'C-dispatch-job', completionDeadline: 'PT10M' },
    now: new Date(),
  });
  const job = started.jobs[0];
  if (job === undefined) throw new Error('no hand-over job');
  http(
    'runJobDispatchTimers',
    createRunJobHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => jobs,
      timerQueue: () => timers,
      handlers: () => ({ handOver: async () => ({}) }),
      verifier: null,
      log: createLogger(() => undefined),
      now: () => new Date(),
      maxAttempts: 3,
      queueMaxAttempts: 5,
    }),
  );
  const res = await request(getTestServer('runJobDispatchTimers'))
    .post('/')
    .send({ jobId: job.id, processInstanceId: job.processInstanceId });
  expect(res.body.outcome).toBe('completed');
  expect(timers.calls).toHaveLength(1);
  const overdue = await timerOf(db, timers.calls[0]?.id ?? '');
  expect(overdue).toMatchObject({ activityId: 'overdue', waitingAt: 'completedOrOverdue', status: 'PENDING' });
  expect(timers.calls[0]?.options).toEqual({ scheduleTime: overdue.dueAt });
});

test('the relay: a correlation that sets a timer creates its task after the commit', async () => {
  const db = dbs('dispatch-relay');
  const jobs = recording();
  const timers = recording();
  await startProcessInstance(db, engine, {
    processKey: 'message-then-timer',
    businessKey: 'C-dispatch-relay',
    variables: { caseId: 'C-dispatch-relay', coolOff: 'PT30M' },
    now: new Date(),
  });
  await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-dispatch-relay') });
  const summary = await relayBatch(
    {
      db,
      engine,
      policy: { backoffBaseMs: 1_000, backoffCapMs: 10_000, bufferWindowMs: DAY, errorAfterAttempts: 5 },
      retentionMs: DAY,
      transactionTimeoutMs: 20_000,
      now: () => new Date(),
      random: () => 0.5,
    },
    { jobs, timers },
    createLogger(() => undefined),
    { budgetMs: 20_000, parallelism: 1, batchSize: 16, shards: 16 },
  );
  expect(summary.correlated).toBe(1);
  expect(jobs.calls).toEqual([]);
  expect(timers.calls).toHaveLength(1);
  const coolOff = await timerOf(db, timers.calls[0]?.id ?? '');
  expect(coolOff).toMatchObject({ activityId: 'coolOff', status: 'PENDING' });
  expect(timers.calls[0]?.options).toEqual({ scheduleTime: coolOff.dueAt });
});

describe('the CLI: a repair that sets a timer', () => {
  const { db, projectId } = dbs.project('dispatch-cli');
  let tasks: CloudTasksEmulator;
  let models: ReturnType<typeof modelsDirWith>;
  const queue = `projects/${projectId}/locations/europe-west1/queues/process-timers`;
  beforeAll(async () => {
    tasks = await startCloudTasksEmulator({ queues: [{ name: queue }] });
    // The CLI loads the models of INBOX_BPMN_DIR with the app's steps: a directory with the deadline model and the app's own.
    models = modelsDirWith(join(FIXTURES, 'deadline-gateway.bpmn'));
  });
  afterAll(async () => {
    await tasks.stop();
    models.remove();
  });

  async function cli(
    env: Record<string, string>,
    ...args: string[]
  ): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(
      args,
      { out: (t) => out.push(t), err: (t) => err.push(t), confirm: async () => false },
      {
        ...process.env,
        ...FIXTURE_ENV,
        GOOGLE_CLOUD_PROJECT: projectId,
        INBOX_BPMN_DIR: models.dir,
        INBOX_TASKS_EMULATOR_HOST: tasks.host,
        ...env,
      },
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  test('move-token from the gateway onto its timer catch event: the new timer is dispatched at its due time; without INBOX_FIRE_TIMER_URL the CLI says the sweep fires it', async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: 'deadline-gateway',
      businessKey: 'C-dispatch-cli',
      variables: { caseId: 'C-dispatch-cli', deadline: 'PT2H' },
      now: new Date(),
    });
    const moved = await cli(
      { INBOX_FIRE_TIMER_URL: 'http://127.0.0.1:9/fireTimer' },
      '--json',
      'repair',
      'move-token',
      '--instance',
      started.instance.id,
      '--activity',
      'overdue',
    );
    expect({ code: moved.code, err: moved.err }).toEqual({ code: 0, err: '' });
    const report = JSON.parse(moved.out) as { timers: TimerState[]; timersDispatched: number };
    expect(report.timersDispatched).toBe(1);
    const [timer] = report.timers;
    const task = tasks.tasks(queue).find((t) => t.name === `${queue}/tasks/${timer?.id ?? ''}`);
    expect(task?.scheduleTime.toISOString()).toBe(timer?.dueAt);
    expect(task?.url).toBe('http://127.0.0.1:9/fireTimer');

    const unset = await cli({}, 'repair', 'move-token', '--instance', started.instance.id, '--activity', 'overdue');
    expect(unset.code).toBe(0);
    expect(unset.out).toContain(
      '1 timer(s) not dispatched here (INBOX_FIRE_TIMER_URL unset or Cloud Tasks failed): sweepJobs fires each once it is overdue',
    );
    expect(tasks.tasks(queue)).toHaveLength(1);
  });
});
