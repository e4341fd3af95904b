/**
 * POST /api/migrations: `inbox migrate` through the console's API
 * (inboxConsole in local access, served in this process on the emulator).
 * The preview changes nothing and answers the `expect` line; a run without
 * it is a 400; the run with it migrates; an unknown version is a 409.
 */
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { loadConfig } from '../../functions/src/config';
import { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { registerVersions } from '../../functions/src/engine/store/versions';
import type { MigrationOutcome } from '../../functions/src/operations/migrate';
import { createRuntime } from '../../functions/src/runtime';
import { inboxConsoleFunctionWith } from '../../functions/src/wiring';
import { FIXTURE_ENV, REPO_ROOT } from '../support/app';
import { freshFirestores } from '../support/firestore';

const { db, projectId } = freshFirestores().project('console-migrate');
const FIXTURES = join(__dirname, '..', 'fixtures', 'bpmn-versions');
const STEPS = new Set(['prepare', 'nudge', 'audit', 'pay']);
const HEADERS = { 'content-type': 'application/json', 'x-inbox-console': '1', 'sec-fetch-site': 'same-origin' };
let v1: ProcessModel;
let v2: ProcessModel;
let server: Server;
let base: string;

const post = async (body: unknown): Promise<{ status: number; body: MigrationOutcome & { error?: string } }> => {
  const res = await fetch(`${base}/api/migrations`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as MigrationOutcome & { error?: string } };
};
const version = async (id: string): Promise<unknown> => (await refs.instance(db, id).get()).get('processVersion');

beforeAll(async () => {
  const xml1 = await readFile(join(FIXTURES, 'v1.bpmn'), 'utf8');
  const xml2 = await readFile(join(FIXTURES, 'v2.bpmn'), 'utf8');
  v1 = await parseProcessModel(xml1);
  v2 = await parseProcessModel(xml2);
  await registerVersions(db, [v1], async () => xml1, new Date());
  await registerVersions(db, [v2], async () => xml2, new Date());
  const config = loadConfig({ ...FIXTURE_ENV, GOOGLE_CLOUD_PROJECT: projectId, INBOX_CONSOLE_ACCESS: 'local' });
  http(
    'inboxConsoleMigrateTest',
    inboxConsoleFunctionWith(join(REPO_ROOT, 'dist', 'console-page'))(config, {
      ...createRuntime(config),
      db: () => db,
    }),
  );
  server = getTestServer('inboxConsoleMigrateTest');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('preview, a run without its expect refused, the run held to it, an unknown version refused', async () => {
  const e1 = new Engine([v1], {}, STEPS);
  const started = await startProcessInstance(db, e1, {
    processKey: 'case-handling',
    businessKey: 'K-1',
    variables: { caseId: 'K-1' },
    now: new Date(),
  });
  await completeJobCounted(db, e1, started.jobs[0]!, {}, new Date());
  const id = started.instance.id;
  const ask = {
    processKey: 'case-handling',
    from: v1.version,
    to: v2.version,
    mapping: { waitApproval: 'waitDecision' },
    instances: [id],
  };

  const preview = await post({ ...ask, preview: true });
  expect(preview.status).toBe(200);
  expect(preview.body.instances[0]).toMatchObject({
    instanceId: id,
    verdict: 'WOULD_MIGRATE',
    moves: [expect.objectContaining({ from: 'waitApproval', to: 'waitDecision' })],
  });
  expect(await version(id)).toBe(v1.version);

  const bare = await post({ ...ask, preview: false });
  expect(bare.status).toBe(400);
  expect(bare.body.error).toMatch(/preview first/);

  const run = await post({ ...ask, preview: false, expect: preview.body.expect });
  expect(run.status).toBe(200);
  expect(run.body.instances[0]).toMatchObject({ instanceId: id, verdict: 'MIGRATED' });
  expect(await version(id)).toBe(v2.version);

  const unknown = await post({ ...ask, to: 'ffffffffffffffff', preview: true });
  expect(unknown.status).toBe(409);
  expect(unknown.body.error).toMatch(/no stored version ffffffffffffffff of process case-handling/);
});
