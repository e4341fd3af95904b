import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadConfig } from '../../functions/src/config';
import { loadEngine } from '../../functions/src/engine/deployed';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { MAX_VARIABLES_BYTES } from '../../functions/src/process/variables';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { createRuntime } from '../../functions/src/runtime';
import { inboxConsoleFunctionWith } from '../../functions/src/wiring';
import { FIXTURE_ENV, modelsDirWith } from '../support/app';
import { freshFirestores } from '../support/firestore';

/**
 * POST /api/tasks/ID/complete checks a completion's variables as
 * startProcess checks a start's (functions/src/process/variables.ts), in
 * operations/user-tasks.ts: what Firestore could not store, or what would
 * take the instance's variables over their bound, is refused naming the
 * path, and the task stays OPEN with the instance unchanged. Served with
 * local access (a loopback caller is the local operator, a repairer), with
 * the review model of test/fixtures/bpmn-review beside the fixture app's.
 */
const models = modelsDirWith(join(__dirname, '..', 'fixtures', 'bpmn-review', 'fixture-review.bpmn'));
const { db, projectId } = freshFirestores().project('console-task-variables');
let engine: Engine;
let server: Server;
let url: string;

beforeAll(async () => {
  engine = await loadEngine(models.dir, {}, new Set(['handOver', 'settle', 'escalate']), inboxBuffer(86_400_000));
  const config = loadConfig({
    ...FIXTURE_ENV,
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_CONSOLE_ACCESS: 'local',
    INBOX_BPMN_DIR: models.dir,
  });
  http(
    'inboxConsoleTaskVariablesTest',
    inboxConsoleFunctionWith(join(__dirname, '..', 'fixtures'))(config, {
      ...createRuntime(config),
      db: () => db,
      engine: async () => engine,
    }),
  );
  server = getTestServer('inboxConsoleTaskVariablesTest');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  models.remove();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
});

/** A case whose review task is OPEN: the task's id, the instance's id. */
async function openReview(
  key: string,
  variables: Record<string, unknown> = {},
): Promise<{ id: string; instanceId: string }> {
  const s = await startProcessInstance(db, engine, {
    processKey: 'fixture-review',
    businessKey: key,
    variables: { caseId: key, ...variables },
    now: new Date(),
  });
  const res = await fetch(`${url}/api/tasks?instance=${s.instance.id}`);
  const { tasks } = (await res.json()) as { tasks: Array<{ id: string }> };
  return { id: tasks[0]?.id ?? '', instanceId: s.instance.id };
}

/** POST with the console's headers; the body as given (a string is sent as is). */
const complete = async (id: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${url}/api/tasks/${id}/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-inbox-console': '1', 'sec-fetch-site': 'same-origin' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

/** The instance document as stored, with the time it was last written. */
const stored = async (instanceId: string): Promise<{ data: unknown; updateTime: string | undefined }> => {
  const snap = await refs.instance(db, instanceId).get();
  return { data: snap.data(), updateTime: snap.updateTime?.toDate().toISOString() };
};
const taskStatus = async (id: string): Promise<unknown> =>
  ((await (await fetch(`${url}/api/tasks/${id}`)).json()) as { status?: unknown }).status;

describe('POST /api/tasks/ID/complete checks the variables', () => {
  const nested = (levels: number): unknown => (levels === 0 ? 'deep' : { d: nested(levels - 1) });
  test.each([
    [
      'a value near 1 MiB',
      JSON.stringify({ variables: { caseId: 'x', note: 'x'.repeat(1_000_000) } }),
      'variables.note',
    ],
    // Written as JSON text: JSON.stringify would not produce a lone surrogate, and the parser keeps one.
    [
      'a lone surrogate',
      '{"variables":{"remark":"a\\ud800b"}}',
      'variables.remark is not valid Unicode (lone surrogate)',
    ],
    ['a reserved key', '{"variables":{"__name__":1}}', 'has the key "__name__", which Firestore does not allow'],
    [
      'nesting deeper than 10 levels',
      JSON.stringify({ variables: { form: nested(12) } }),
      'is nested deeper than 10 levels',
    ],
  ])('%s: 400 naming the path; the task stays OPEN, the instance unchanged', async (_what, body, message) => {
    const { id, instanceId } = await openReview(`T-${Math.random().toString(36).slice(2)}`);
    const before = await stored(instanceId);
    const res = await complete(id, body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ refused: true, error: expect.stringContaining(message) as unknown });
    expect(res.json.error).toMatch(/the task stays OPEN/);
    expect(await taskStatus(id)).toBe('OPEN');
    expect(await stored(instanceId)).toEqual(before);
  });

  test('variables each fine whose merge with the instance’s would pass the bound: 409 saying so; smaller ones complete', async () => {
    // The instance holds 40,000 bytes of notes; the completion brings 30,000 more: each alone is within 64 KiB.
    const { id, instanceId } = await openReview('T-merge', { notes: 'n'.repeat(40_000) });
    const before = await stored(instanceId);
    const res = await complete(id, { variables: { review: 'r'.repeat(30_000) } });
    expect(res.status).toBe(409);
    expect(res.json.refused).toBe(true);
    expect(res.json.error).toMatch(
      new RegExp(
        `merged with the instance's variables, variables take \\d+ bytes .*at most ${MAX_VARIABLES_BYTES} bytes`,
      ),
    );
    expect(res.json.error).toContain('variables.notes');
    expect(await taskStatus(id)).toBe('OPEN');
    expect(await stored(instanceId)).toEqual(before);

    // Within the bound, merged too: completed.
    const done = await complete(id, { variables: { review: 'r'.repeat(1_000) } });
    expect(done.status).toBe(200);
    expect(done.json.status).toBe('COMPLETED');
    expect((await refs.instance(db, instanceId).get()).get('variables.review')).toBe('r'.repeat(1_000));
  });
});
