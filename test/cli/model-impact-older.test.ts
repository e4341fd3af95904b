/**
 * `inbox model impact` against instances of older versions that have not yet
 * reached a task the new app drops the handler of: the case of
 * test/fixtures/bpmn-versions (test/support/case-versions.ts seeds four
 * instances of v1, all before `pay`, and one of v2, also stored here), and
 * test/fixtures/apps/case-handling-v4, whose model ends without pay and
 * whose app drops pay's handler. Refused naming pay, each version and how
 * many instances could still reach it; --force lists them as what may
 * become incidents; with the handler kept (case-handling-v4-kept,
 * keepForOlderVersions: ['pay']) the impact and the app check accept it.
 */
import { readFile } from 'node:fs/promises';
import { registerVersions } from '../../functions/src/engine/store/versions';
import { type CaseVersions, seedCaseVersions, V2_FILE } from '../support/case-versions';
import { freshFirestores } from '../support/firestore';
import { cliFor } from './run-cli';

const fresh = freshFirestores();
const { db, projectId } = fresh.project('model-impact-older');
const v4 = cliFor(projectId, undefined, { INBOX_APP: 'test/fixtures/apps/case-handling-v4' });
const kept = cliFor(projectId, undefined, { INBOX_APP: 'test/fixtures/apps/case-handling-v4-kept' });
let seeded: CaseVersions;

beforeAll(async () => {
  seeded = await seedCaseVersions(db);
  const xml = await readFile(V2_FILE, 'utf8');
  await registerVersions(db, [seeded.v2], async () => xml, new Date());
}, 60_000);

const short = (version: string): string => version.slice(0, 8);

test('refused: instances of v1 and v2 waiting before pay could still reach it, and v4 has no handler', async () => {
  const r = await v4('model', 'impact');
  expect(r.code).toBe(1);
  expect(r.err).toContain(
    `refused: the app drops step handlers that instances of older versions can still reach: pay (4 instances of case-handling version ${short(seeded.v1.version)} could still reach pay); pay (1 instance of case-handling version ${short(seeded.v2.version)} could still reach pay)`,
  );
  expect(r.err).toContain("name it in defineApp's keepForOlderVersions");
  // The pending prepare jobs have their handler in v4: only pay is named.
  expect(r.err).not.toContain('pending jobs still need');
  expect(r.out).toContain(`DROPPED handler pay (4 instances of case-handling version ${short(seeded.v1.version)}`);
});

test('--force: not refused, and lists what may become incidents', async () => {
  const r = await v4('--json', 'model', 'impact', '--force');
  expect(r).toMatchObject({ code: 0, err: '' });
  const view = r.json() as {
    refused: boolean;
    forced: boolean;
    unreachedHandlers: unknown[];
    unwalkedVersions: unknown[];
  };
  expect(view).toMatchObject({ refused: false, forced: true, unwalkedVersions: [] });
  expect(view.unreachedHandlers).toEqual([
    {
      handler: 'pay',
      processKey: 'case-handling',
      processVersion: seeded.v1.version,
      activities: ['pay'],
      instances: 4,
    },
    {
      handler: 'pay',
      processKey: 'case-handling',
      processVersion: seeded.v2.version,
      activities: ['pay'],
      instances: 1,
    },
  ]);
  const text = await v4('model', 'impact', '--force');
  expect(text.out).toContain(
    `--force: may become incidents (JOB_FAILED, no async handler registered): handler pay (4 instances of case-handling version ${short(seeded.v1.version)}`,
  );
});

test('with pay kept for older versions: the impact accepts it, and so does the app check', async () => {
  const r = await kept('model', 'impact');
  expect(r).toMatchObject({ code: 0, err: '' });
  expect(r.out).toContain('handlers: no instance of an older version can reach a task the app has no handler for');
  const app = await kept('app');
  expect(app).toMatchObject({ code: 0, err: '' });
  expect(app.out).toContain('kept for older versions: pay');
});
