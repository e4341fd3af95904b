import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import type { JobState } from '../../functions/src/engine/state';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { createRuntime } from '../../functions/src/runtime';
import { inboxConsoleFunctionWith } from '../../functions/src/wiring';
import { FIXTURE_ENV, modelsDirWith } from '../support/app';
import { freshFirestores } from '../support/firestore';
import { cliFor } from './run-cli';

/**
 * `inbox tasks list / show / complete` and the console's /api/tasks against
 * the emulator, with a deployed model that has a user task beside a job
 * (test/fixtures/bpmn-review/fixture-review.bpmn, in INBOX_BPMN_DIR with the
 * fixture app's model). The console is served with local access (a
 * loopback caller is the local operator, a repairer).
 */
const models = modelsDirWith(join(__dirname, '..', 'fixtures', 'bpmn-review', 'fixture-review.bpmn'));
const fresh = freshFirestores();
const { db, projectId } = fresh.project('cli-tasks');
const cli = cliFor(projectId, undefined, { INBOX_BPMN_DIR: models.dir, INBOX_OPERATOR: 'ops@example.com' });
let engine: Engine;
let server: Server;
let url: string;

interface TaskRow {
  id: string;
  activityId: string;
  status: string;
  assignee: string | null;
  candidateGroups: string[];
  businessKey: string;
  processInstanceId: string;
}

async function caseWithReview(key: string): Promise<{ instanceId: string; job: JobState }> {
  const s = await startProcessInstance(db, engine, {
    processKey: 'fixture-review',
    businessKey: key,
    variables: { caseId: key },
    now: new Date(),
  });
  return { instanceId: s.instance.id, job: s.jobs[0] as JobState };
}

const open = async (...filter: string[]): Promise<TaskRow[]> => {
  const r = await cli('--json', 'tasks', 'list', ...filter);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return (r.json() as { tasks: TaskRow[] }).tasks;
};

beforeAll(async () => {
  engine = await loadEngine(models.dir, {}, new Set(['handOver', 'settle', 'escalate']), inboxBuffer(86_400_000));
  const config = loadConfig({
    ...FIXTURE_ENV,
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_CONSOLE_ACCESS: 'local',
    INBOX_BPMN_DIR: models.dir,
  });
  http(
    'inboxConsoleTasksTest',
    inboxConsoleFunctionWith(join(__dirname, '..', 'fixtures'))(config, {
      ...createRuntime(config),
      db: () => db,
      engine: async () => engine,
    }),
  );
  server = getTestServer('inboxConsoleTasksTest');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  models.remove();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
});

describe('inbox tasks', () => {
  test('list shows the open task with who may do it; filters by assignee, group and instance', async () => {
    const { instanceId } = await caseWithReview('T-list');
    const all = await open();
    const mine = all.find((t) => t.processInstanceId === instanceId);
    expect(mine).toMatchObject({
      activityId: 'review',
      status: 'OPEN',
      assignee: 'ana',
      candidateGroups: ['reviewers', 'leads'],
      businessKey: 'T-list',
    });
    expect((await open('--assignee', 'ana')).map((t) => t.id)).toContain(mine?.id);
    expect((await open('--assignee', 'bob')).map((t) => t.id)).not.toContain(mine?.id);
    expect((await open('--group', 'leads')).map((t) => t.id)).toContain(mine?.id);
    expect((await open('--instance', instanceId)).map((t) => t.id)).toEqual([mine?.id]);

    const shown = await cli('tasks', 'show', mine?.id ?? '');
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('form key         forms/review');
    expect(shown.out).toContain('candidate groups reviewers, leads');
  });

  test('complete merges --vars and moves the token; the same --request-id again is "already completed"; another is refused', async () => {
    const { instanceId, job } = await caseWithReview('T-complete');
    const [task] = await open('--instance', instanceId);
    const id = task?.id ?? '';
    const done = await cli('tasks', 'complete', id, '--vars', '{"approved":true}', '--request-id', 'once');
    expect(done.err).toBe('');
    expect(done.code).toBe(0);
    expect(done.out).toMatch(/COMPLETED/);
    const again = await cli('tasks', 'complete', id, '--request-id', 'once');
    expect(again.code).toBe(0);
    expect(again.out).toContain('already completed by this request: nothing changed');
    const other = await cli('tasks', 'complete', id, '--request-id', 'twice');
    expect(other.code).toBe(1);
    expect(other.err).toMatch(/is already completed by ops@example.com at /);

    expect((await refs.instance(db, instanceId).get()).get('variables')).toMatchObject({ approved: true });
    // The hand-over finishes: the join goes on to the settlement.
    expect((await completeJobRun(db, engine, job, {}, new Date())).jobs.map((j) => j.activityId)).toEqual(['settle']);
    expect(await open('--instance', instanceId)).toEqual([]);
    expect((await open('--status', 'COMPLETED', '--instance', instanceId)).map((t) => t.id)).toEqual([id]);
  });

  test.each([
    ['a value near 1 MiB', JSON.stringify({ note: 'x'.repeat(1_000_000) }), {}, /variables\.note, \d+ bytes\)/],
    // JSON text: the parser keeps a lone surrogate that JSON.stringify would escape.
    ['a lone surrogate', '{"remark":"a\\ud800b"}', {}, /variables\.remark is not valid Unicode \(lone surrogate\)/],
    ['a reserved key', '{"__name__":1}', {}, /has the key "__name__", which Firestore does not allow/],
    [
      'variables each fine whose merge with the instance’s passes the bound',
      JSON.stringify({ review: 'r'.repeat(30_000) }),
      { notes: 'n'.repeat(40_000) },
      /merged with the instance's variables, variables take \d+ bytes .*variables\.notes/,
    ],
  ])(
    'complete --vars with %s: refused (exit 1) naming the path; the task stays OPEN, the instance unchanged',
    async (_what, vars, more, message) => {
      const key = `T-vars-${Math.random().toString(36).slice(2)}`;
      const s = await startProcessInstance(db, engine, {
        processKey: 'fixture-review',
        businessKey: key,
        variables: { caseId: key, ...more },
        now: new Date(),
      });
      const [task] = await open('--instance', s.instance.id);
      const before = await refs.instance(db, s.instance.id).get();
      const r = await cli('tasks', 'complete', task?.id ?? '', '--vars', vars);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(message);
      expect(r.err).toMatch(/the task stays OPEN/);
      expect(r.err.split('\n')).toHaveLength(1);
      expect((await open('--instance', s.instance.id)).map((t) => t.status)).toEqual(['OPEN']);
      const after = await refs.instance(db, s.instance.id).get();
      expect(after.updateTime?.isEqual(before.updateTime!)).toBe(true);
      expect(after.data()).toEqual(before.data());
    },
  );

  test.each([
    [['tasks', 'complete', 'x', '--vars', '[1]'], 2, '--vars: a JSON object of variables, not an array'],
    [['tasks', 'complete', 'x', '--vars', '{'], 2, '--vars: not JSON'],
    [['tasks', 'list', '--assignee', 'a', '--group', 'g'], 2, 'give at most one of --assignee, --group and --instance'],
    [['tasks', 'list', '--status', 'DONE'], 2, '--status'],
    [['tasks', 'complete', 'no-such-task'], 1, 'no user task no-such-task'],
    [['tasks', 'show', 'no-such-task'], 1, 'no user task no-such-task'],
  ])('%j: exit %d, one line saying %s', async (args, code, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(code);
    expect(r.err).toContain(message);
  });
});

describe('the console: /api/tasks', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-inbox-console': '1',
        'sec-fetch-site': 'same-origin',
        ...headers,
      },
      body: JSON.stringify(body),
    });

  test('the list and one task as JSON; the completion moves the token and is recorded with the operator', async () => {
    const { instanceId } = await caseWithReview('T-console');
    const list = await fetch(`${url}/api/tasks?instance=${instanceId}`);
    expect(list.status).toBe(200);
    const { tasks } = (await list.json()) as { tasks: TaskRow[] };
    expect(tasks.map((t) => t.activityId)).toEqual(['review']);
    const id = tasks[0]?.id ?? '';
    expect((await (await fetch(`${url}/api/tasks/${id}`)).json()) as TaskRow).toMatchObject({ id, status: 'OPEN' });

    const done = await post(`/api/tasks/${id}/complete`, { variables: { approved: false }, requestId: 'c-1' });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ status: 'COMPLETED', task: { completedBy: 'local operator' } });
    const again = await post(`/api/tasks/${id}/complete`, { requestId: 'c-1' });
    expect(await again.json()).toMatchObject({ status: 'ALREADY_COMPLETED' });
    const other = await post(`/api/tasks/${id}/complete`, { requestId: 'c-2' });
    expect(other.status).toBe(409);
    expect(((await other.json()) as { error: string }).error).toMatch(/already completed by local operator/);
  });

  test.each([
    ['a bad filter', 400, () => fetch(`${url}/api/tasks?status=DONE`)],
    ['two filters', 400, () => fetch(`${url}/api/tasks?assignee=a&group=b`)],
    ['an unknown task', 404, () => fetch(`${url}/api/tasks/nope`)],
    ['GET on complete', 405, () => fetch(`${url}/api/tasks/nope/complete`)],
    ['variables that are no object', 400, () => post('/api/tasks/nope/complete', { variables: [1] })],
    [
      'a completion without the console header',
      403,
      () => post('/api/tasks/nope/complete', {}, { 'x-inbox-console': '0' }),
    ],
    ['an unknown task completed', 409, () => post('/api/tasks/nope/complete', {})],
  ])('%s: %d JSON', async (_name, status, send) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(typeof ((await res.json()) as { error?: unknown }).error).toBe('string');
  });
});
