/**
 * `inbox migrate` against the emulator (issue 40, item 4): instances of v1
 * of the case process (prepare → waitApproval with a reminder → pay) moved
 * to v2 (the wait renamed waitDecision, audit before pay) with
 * `--map waitApproval=waitDecision`. The dry run changes nothing; the real
 * run is held to it instance by instance; a migrated instance completes
 * along v2; the same request id again changes nothing.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { registerVersions } from '../../functions/src/engine/store/versions';
import type { InstanceState } from '../../functions/src/engine/state';
import type { MigrationOutcome } from '../../functions/src/operations/migrate';
import { caseDriver, loadVersion, STEPS, V1_FILE, V2_FILE } from '../support/case-versions';
import { freshFirestores } from '../support/firestore';
import { cliFor, fakeTerminal } from './run-cli';

const { db, projectId } = freshFirestores().project('cli-migrate');
const cli = cliFor(projectId);
const { approve, runJobs, ...cases } = caseDriver(db);
let v1: ProcessModel;
let v2: ProcessModel;
let e1: Engine;
let e2: Engine;

const start = (caseId: string) => cases.start(e1, caseId);
/** A case waiting at v1's waitApproval (its prepare job done), with its reminder timer set. */
async function waiting(caseId: string): Promise<string> {
  const s = await start(caseId);
  await runJobs(e1, s.jobs);
  return s.instance.id;
}
const instance = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).get()).data() as unknown as InstanceState;

/** Every document the migration may touch, as stored: what a dry run must leave as it was. */
async function everything(store: Firestore): Promise<string> {
  const names = [COLLECTIONS.instances, COLLECTIONS.timers, COLLECTIONS.correlationKeys, COLLECTIONS.userTasks];
  const dump: Record<string, unknown> = {};
  for (const name of names)
    for (const doc of (await store.collection(name).get()).docs)
      dump[doc.ref.path] = { ...doc.data(), at: doc.updateTime.toMillis() };
  return JSON.stringify(dump);
}

/** `inbox --json migrate` of case-handling from FROM to TO, waitApproval mapped to waitDecision, then `args`. */
const migrateBetween = (from: string, to: string, ...args: string[]) =>
  cli(
    '--json',
    'migrate',
    '--process',
    'case-handling',
    '--from',
    from,
    '--to',
    to,
    '--map',
    'waitApproval=waitDecision',
    ...args,
  );
const migrate = (...args: string[]) => migrateBetween(v1.version, v2.version, ...args);

beforeAll(async () => {
  const a = await loadVersion(V1_FILE);
  const b = await loadVersion(V2_FILE);
  v1 = a.model;
  v2 = b.model;
  await registerVersions(db, [v1], async () => a.xml, new Date());
  await registerVersions(db, [v2], async () => b.xml, new Date());
  e1 = new Engine([v1], {}, STEPS);
  e2 = new Engine([v2], {}, STEPS);
});

test('dry run, held real run, completion along v2, refusals per instance, and a resumed run that changes nothing', async () => {
  const a = await waiting('M-a');
  const b = await waiting('M-b');
  // Its prepare job in flight; mapped to audit below, whose handler differs: refused.
  const c = (await start('M-c')).instance.id;
  const ids = [a, b, c].join(',');

  const before = await everything(db);
  const dry = await migrate('--map', 'prepare=audit', '--instances', ids, '--dry-run');
  expect(dry.code).toBe(1);
  expect(await everything(db)).toBe(before);
  const preview = dry.json() as MigrationOutcome;
  expect(preview.preview).toBe(true);
  const byId = new Map(preview.instances.map((i) => [i.instanceId, i]));
  expect(byId.get(a)).toMatchObject({
    verdict: 'WOULD_MIGRATE',
    moves: [expect.objectContaining({ from: 'waitApproval', to: 'waitDecision' })],
  });
  expect(byId.get(a)?.moves[0]?.effects.join('; ')).toMatch(/boundary timer remind stays due at/);
  expect(byId.get(c)).toMatchObject({ verdict: 'REFUSED' });
  expect(byId.get(c)?.reason).toMatch(/its job runs the handler prepare, and audit would run audit/);
  expect(preview.expect).toMatch(new RegExp(`^migration:.*${a}=[0-9a-f]{16}`));
  expect(preview.expect).not.toContain(c);

  // Without --expect the real run is refused as bad usage, nothing done.
  expect((await migrate('--map', 'prepare=audit', '--instances', ids)).code).toBe(2);
  expect((await instance(a)).processVersion).toBe(v1.version);

  // b moves on after the preview: its token is no longer where the preview saw it.
  const moved = await approve(e1, 'M-b');
  expect(moved.result.kind).toBe('CORRELATED');

  const requestId = 'migrate-test-1';
  const real = await migrate(
    '--map',
    'prepare=audit',
    '--instances',
    ids,
    '--expect',
    preview.expect ?? '',
    '--request-id',
    requestId,
  );
  expect(real.code).toBe(1);
  const done = new Map((real.json() as MigrationOutcome).instances.map((i) => [i.instanceId, i]));
  expect(done.get(a)?.verdict).toBe('MIGRATED');
  expect(done.get(b)).toMatchObject({ verdict: 'REFUSED' });
  expect(done.get(b)?.reason).toMatch(/changed since the preview/);
  expect(done.get(c)).toMatchObject({ verdict: 'REFUSED' });
  expect(done.get(c)?.reason).toMatch(/not in the preview/);
  expect((await instance(b)).processVersion).toBe(v1.version);
  expect((await instance(c)).processVersion).toBe(v1.version);

  const migrated = await instance(a);
  expect(migrated.processVersion).toBe(v2.version);
  const timers = await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', a).get();
  expect(timers.docs.map((d) => [d.get('activityId'), d.get('waitingAt')])).toEqual([['remind', 'waitDecision']]);

  // The same request id again: reported as done, nothing changed.
  const stored = await everything(db);
  const again = await migrate(
    '--map',
    'prepare=audit',
    '--instances',
    a,
    '--expect',
    preview.expect ?? '',
    '--request-id',
    requestId,
  );
  expect(again.code).toBe(0);
  expect((again.json() as MigrationOutcome).instances[0]).toMatchObject({ instanceId: a, verdict: 'ALREADY_MIGRATED' });
  expect(await everything(db)).toBe(stored);

  // The migrated case goes on along v2: its approval takes it through audit, then pay.
  const approved = await approve(e2, 'M-a');
  expect(approved.result.kind).toBe('CORRELATED');
  expect(await runJobs(e2, approved.result.kind === 'CORRELATED' ? approved.result.jobs : [])).toEqual([
    'audit',
    'pay',
  ]);
  expect((await instance(a)).status).toBe('COMPLETED');
});

test('--all takes every running instance at --from; a version that is not stored is refused', async () => {
  const d = await waiting('M-d');
  const dry = await migrate('--all', '--dry-run');
  const preview = dry.json() as MigrationOutcome;
  expect(preview.instances.map((i) => i.instanceId)).toContain(d);
  // The versions as `inbox versions` names them: 8 hex digits do.
  const real = await migrateBetween(
    v1.version.slice(0, 8),
    v2.version.slice(0, 8),
    '--all',
    '--expect',
    preview.expect ?? '',
  );
  const outcome = real.json() as MigrationOutcome;
  expect(outcome.instances.find((i) => i.instanceId === d)?.verdict).toBe('MIGRATED');
  expect((await instance(d)).processVersion).toBe(v2.version);
  const unknown = await cli(
    'migrate',
    '--process',
    'case-handling',
    '--from',
    v1.version,
    '--to',
    'ffffffffffffffff',
    '--all',
    '--dry-run',
  );
  expect(unknown.code).toBe(1);
  expect(unknown.err).toMatch(/no stored version ffffffffffffffff of process case-handling/);
});

test('for people: a table of moves, a progress bar on a terminal, and the --expect line to run it', async () => {
  const e = await waiting('M-e');
  const f = await waiting('M-f');
  const terminal = fakeTerminal();
  const human = cliFor(projectId, terminal.stream);
  const args = ['--process', 'case-handling', '--from', v1.version, '--to', v2.version];
  const dry = await human(
    'migrate',
    ...args,
    '--map',
    'waitApproval=waitDecision',
    '--instances',
    `${e},${f}`,
    '--dry-run',
  );
  expect(dry.code).toBe(0);
  expect(dry.out).toContain('would migrate');
  expect(dry.out).toContain('waitApproval → waitDecision (WAITING_MESSAGE)');
  expect(dry.out).toMatch(/dry run: nothing changed; 2 would migrate, 0 would be refused/);
  expect(dry.out).toMatch(/--expect 'migration:[^']+'/);
  expect(terminal.drawn()).toContain('2/2 instances');
  const unmapped = await human('migrate', ...args, '--instances', e, '--dry-run');
  expect(unmapped.code).toBe(1);
  expect(unmapped.out).toMatch(
    /no target: the target version draws no waitApproval; map it with --map waitApproval=TARGET/,
  );
});
