/**
 * infra/deploy.sh's impact check (`inbox model impact`, infra/lib/impact.sh)
 * against a live project on the Firestore emulator (FIRESTORE_EMULATOR_HOST:
 * the project id is the emulator's): the case of test/fixtures/bpmn-versions
 * has v1 stored and instances waiting, two `prepare` jobs pending
 * (test/support/case-versions.ts); the app deployed is v3, which drops
 * `prepare`. The dry run prints the diff from the stored version with what
 * waits at each changed element, and is refused, naming the handler and the
 * count, before any command; --force goes on and says what will become an
 * incident. No Google Cloud: gcloud, firebase and curl are fakes that fail.
 */
import { seedCaseVersions, V3_APP, type CaseVersions } from '../support/case-versions';
import { freshFirestores } from '../support/firestore';
import { commandsOf, deploy, useSandbox } from './helpers';

useSandbox();
const fresh = freshFirestores();
const { db, projectId } = fresh.project('deploy-impact');
let seeded: CaseVersions;

beforeAll(async () => {
  seeded = await seedCaseVersions(db);
}, 60_000);

test('the dry run prints the impact of the changed model, then refuses: v3 drops a handler pending jobs need', () => {
  const run = deploy(['--project', projectId, '--dry-run', '--app', V3_APP]);
  expect(run.status).toBe(1);
  expect(run.stderr).toMatch(
    /^error: refused: the app drops step handlers that pending jobs still need: prepare \(2 pending jobs of case-handling at prepare\): .*--force.*; nothing was deployed$/m,
  );
  expect(run.stdout).toContain('# === Impact on running instances');
  expect(run.stdout).toContain(`# case-handling: version ${seeded.v1.version} (deployed) → version`);
  expect(run.stdout).toMatch(/^#\s+removed\s+waitApproval \(receiveTask\)\s+\[2 running \+ 0 in incident tokens/m);
  expect(run.stdout).toMatch(/^# DROPPED handler prepare \(2 pending jobs/m);
  // Refused before anything is created or printed as a command.
  expect(commandsOf(run.stdout)).toEqual([]);
}, 60_000);

test('--force: the dry run goes on, printing what will become an incident, then every command', () => {
  const run = deploy(['--project', projectId, '--dry-run', '--app', V3_APP, '--force']);
  expect(run.status).toBe(0);
  expect(run.stdout).toMatch(
    /^# --force: will become incidents \(JOB_FAILED, no async handler registered\) when they run: handler prepare \(2 pending jobs/m,
  );
  expect(commandsOf(run.stdout).some((c) => c.startsWith('gcloud functions deploy runJob '))).toBe(true);
}, 60_000);
