/**
 * `inbox model diff` and `inbox model impact` against a live project on the
 * emulator: the case of test/fixtures/bpmn-versions with instances of v1 at
 * the wait (with their reminder timers), at a pending job and in INCIDENT,
 * and one of v2 (test/support/case-versions.ts). Without a project the diff
 * reads nothing; with one it counts what sits at each removed or changed
 * element, leaving out NEW's own instances; the impact of an app that drops
 * the `prepare` handler is refused while prepare jobs are pending, and with
 * --force says what will become an incident.
 */
import { runCli } from '../../functions/src/cli/main';
import { readProcessLoad } from '../../functions/src/operations/model-impact';
import type { DiffImpact } from '../../functions/src/cli/model-diff-lines';
import {
  type CaseVersions,
  finishPreparing,
  seedCaseVersions,
  V1_FILE,
  V2_FILE,
  V3_APP,
} from '../support/case-versions';
import { freshFirestores } from '../support/firestore';
import { cliFor } from './run-cli';

const fresh = freshFirestores();
const { db, projectId } = fresh.project('model-diff');
const inbox = cliFor(projectId);
const v3 = cliFor(projectId, undefined, { INBOX_APP: V3_APP });
let seeded: CaseVersions;

beforeAll(async () => {
  seeded = await seedCaseVersions(db);
}, 60_000);

/** The load of one element in a --json diff's impact. */
const at = (impact: DiffImpact, id: string) => impact.elements.find((e) => e.id === id);

test('two files without a project: the diff alone, no Firestore read', async () => {
  const out: string[] = [];
  const err: string[] = [];
  // No GOOGLE_CLOUD_PROJECT, no emulator: any read of a project would fail.
  const code = await runCli(
    ['model', 'diff', V1_FILE, V2_FILE],
    { out: (t) => out.push(t), err: (t) => err.push(t), confirm: async () => false },
    { PATH: process.env.PATH, HOME: process.env.HOME },
  );
  expect({ code, err }).toEqual({ code: 0, err: [] });
  const text = out.join('\n');
  expect(text).toContain(`case-handling: ${V1_FILE} → ${V2_FILE}`);
  expect(text).toMatch(/^ {2}removed {2}waitApproval \(receiveTask\)$/m);
  expect(text).toMatch(/^ {2}added {4}audit \(serviceTask\)$/m);
  expect(text).toMatch(/^ {13}attachedTo: waitApproval \(non-interrupting\) ⇒ waitDecision \(non-interrupting\)$/m);
  expect(text).not.toContain('live:');
});

test('--live: what sits at each removed or changed element, v2 instances left out', async () => {
  const r = await inbox('--json', 'model', 'diff', V1_FILE, V2_FILE, '--live');
  expect(r).toMatchObject({ code: 0, err: '' });
  const view = r.json() as { removed: { id: string }[]; impact: DiffImpact };
  expect(view.removed.map((e) => e.id)).toEqual(['waitApproval']);
  // Five instances: four of v1, one of v2 (read, but not counted at the elements).
  expect(view.impact).toMatchObject({ instancesRead: 5, capped: false, skippedVersion: seeded.v2.version });
  expect(at(view.impact, 'waitApproval')).toMatchObject({ tokensRunning: 2, tokensIncident: 0, pendingJobs: 0 });
  expect(at(view.impact, 'remind')).toMatchObject({ scheduledTimers: 2, tokensRunning: 0 });
  expect(at(view.impact, 'prepare')).toMatchObject({ tokensRunning: 1, tokensIncident: 1, pendingJobs: 1 });
  expect(at(view.impact, 'pay')).toMatchObject({ tokensRunning: 0, pendingJobs: 0, scheduledTimers: 0 });
  const text = await inbox('model', 'diff', V1_FILE, V2_FILE, '--live');
  expect(text.out).toMatch(
    /removed {2}waitApproval \(receiveTask\) {2}\[2 running \+ 0 in incident tokens, 0 pending jobs/,
  );
  expect(text.out).toContain('live: 5 RUNNING and INCIDENT instances read');
});

test('the read is bounded: at the bound it says capped, exactly at the count it does not', async () => {
  // Five instances of case-handling are RUNNING or INCIDENT.
  const under = await readProcessLoad(db, 'case-handling', [], null, 2);
  expect({ read: under.instancesRead, capped: under.capped }).toEqual({ read: 2, capped: true });
  const exact = await readProcessLoad(db, 'case-handling', [], null, 5);
  expect({ read: exact.instancesRead, capped: exact.capped }).toEqual({ read: 5, capped: false });
});

test('--deployed: OLD is the newest stored version (v1 here), with the same counts', async () => {
  const r = await inbox('--json', 'model', 'diff', V2_FILE, '--deployed');
  expect(r).toMatchObject({ code: 0, err: '' });
  const view = r.json() as { from: string; fromVersion: string; impact: DiffImpact };
  expect(view.from).toBe(`version ${seeded.v1.version} (deployed)`);
  expect(view.fromVersion).toBe(seeded.v1.version);
  expect(at(view.impact, 'waitApproval')?.tokensRunning).toBe(2);
});

test('bad input: a version not stored, OLD named twice, one file only', async () => {
  const missing = await inbox('model', 'diff', V2_FILE, '--from-version', '0000000000000000');
  expect(missing.code).toBe(1);
  expect(missing.err).toMatch(/version 0000000000000000 of case-handling is not stored in processVersions/);
  const twice = await inbox('model', 'diff', V2_FILE, '--from-version', seeded.v1.version, '--deployed');
  expect(twice).toMatchObject({ code: 2, err: expect.stringMatching(/give one of them/) as unknown });
  const one = await inbox('model', 'diff', V2_FILE);
  expect(one).toMatchObject({ code: 2, err: expect.stringMatching(/give OLD and NEW/) as unknown });
});

describe('model impact: an app whose v3 drops the prepare handler', () => {
  test('refused while prepare jobs are pending, naming the handler and the count', async () => {
    const r = await v3('model', 'impact');
    expect(r.code).toBe(1);
    // Both pending prepare jobs need it: v1's and v2's.
    expect(r.err).toMatch(
      /refused: the app drops step handlers that pending jobs still need: prepare \(2 pending jobs of case-handling at prepare\)/,
    );
    expect(r.out).toContain(`case-handling: version ${seeded.v1.version} (deployed) → version`);
    expect(r.out).toContain('DROPPED handler prepare (2 pending jobs');
  });

  test('--force: not refused, and says what will become an incident', async () => {
    const r = await v3('--json', 'model', 'impact', '--force');
    expect(r).toMatchObject({ code: 0, err: '' });
    const view = r.json() as {
      refused: boolean;
      forced: boolean;
      droppedHandlers: { handler: string; pendingJobs: number }[];
    };
    expect(view).toMatchObject({ refused: false, forced: true });
    expect(view.droppedHandlers).toEqual([expect.objectContaining({ handler: 'prepare', pendingJobs: 2 })]);
    const text = await v3('model', 'impact', '--force');
    expect(text.out).toContain(
      '--force: will become incidents (JOB_FAILED, no async handler registered) when they run: handler prepare (2 pending jobs',
    );
  });

  test('once the prepare jobs are done, only the instance in INCIDENT at prepare still needs it (a retry runs it)', async () => {
    await finishPreparing(db, seeded);
    const r = await v3('model', 'impact');
    expect(r.code).toBe(1);
    expect(r.out).toContain('handlers: every pending job has its handler in the app');
    expect(r.err).toContain(
      `refused: the app drops step handlers that instances of older versions can still reach: prepare (1 instance of case-handling version ${seeded.v1.version.slice(0, 8)} could still reach prepare)`,
    );
  });
});
