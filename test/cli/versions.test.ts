/**
 * `inbox versions` against the emulator (issue 40): each version of a
 * process with its instances and waiting tokens, a version live instances
 * run that was never stored, `--register FILE` storing it, and `--retire`
 * refused while anything uses a version (or for the deployed one) and held
 * to its preview. case-handling (test/fixtures/bpmn-versions) is not one of
 * the CLI's deployed models (the fixture app's); its instances are started
 * here by engines of its own versions.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { correlate } from '../../functions/src/engine/store/correlate';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { registerVersions, versionRef } from '../../functions/src/engine/store/versions';
import type { JobState } from '../../functions/src/engine/state';
import type { VersionRow, VersionsReport } from '../../functions/src/operations/versions';
import { DEFAULT_NAME_ATTRIBUTE } from '../../functions/src/receiver/registry';
import { FIXTURE_MODELS } from '../support/app';
import { storePushed } from '../support/inbox';
import { freshFirestores } from '../support/firestore';
import { cliFor } from './run-cli';

const DIR = join(__dirname, '..', 'fixtures', 'bpmn-versions');
const { db, projectId } = freshFirestores().project('cli-versions');
const cli = cliFor(projectId);
const STEPS = new Set(['prepare', 'nudge', 'audit', 'pay']);
const tmp = mkdtempSync(join(tmpdir(), 'inbox-versions-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let v1: ProcessModel;
let v2: ProcessModel;
/** v1 edited since (another content hash), never stored: as a model deployed before versions were kept. */
let v1b: { model: ProcessModel; xml: string };
let inspection: ProcessModel;
/** What the test started, for its assertions. */
const started = { waiting: '', inFlight: '', unstored: '', parent: '', items: [] as string[], done: '' };

async function start(engine: Engine, processKey: string, businessKey: string, variables: Record<string, unknown>) {
  return startProcessInstance(db, engine, { processKey, businessKey, variables, now: new Date() });
}
async function runAll(engine: Engine, jobs: readonly JobState[]): Promise<void> {
  for (const queue = [...jobs]; queue.length > 0;) {
    const done = await completeJobCounted(db, engine, queue.shift() as JobState, {}, new Date());
    queue.push(...done.result.jobs);
  }
}
const approve = (engine: Engine, caseId: string) =>
  runUnitOfWork(db, (uow) =>
    correlate(uow, engine, { messageName: 'Approved', correlationKey: caseId, variables: {}, now: new Date() }),
  );
const report = async (...args: string[]): Promise<VersionsReport> => {
  const run = await cli('--json', 'versions', ...args);
  expect(run).toMatchObject({ code: 0, err: '' });
  return run.json() as VersionsReport;
};
const row = (r: VersionsReport, version: string): VersionRow | undefined =>
  r.versions.find((v) => v.version === version);

beforeAll(async () => {
  const xml1 = await readFile(join(DIR, 'v1.bpmn'), 'utf8');
  const xml2 = await readFile(join(DIR, 'v2.bpmn'), 'utf8');
  v1 = await parseProcessModel(xml1);
  v2 = await parseProcessModel(xml2);
  const xml1b = xml1.replace('Version 1 of a case', 'Version 1 of a case, edited');
  v1b = { model: await parseProcessModel(xml1b), xml: xml1b };
  inspection = await loadProcessModel(join(__dirname, '..', 'fixtures', 'bpmn-items', 'inspection.bpmn'));
  await registerVersions(db, [v1], async () => xml1, new Date(Date.now() - 3_600_000));
  await registerVersions(db, [v2], async () => xml2, new Date());
  await registerVersions(
    db,
    [inspection],
    async () => readFile(join(__dirname, '..', 'fixtures', 'bpmn-items', 'inspection.bpmn'), 'utf8'),
    new Date(),
  );
  const e1 = new Engine([v1], {}, STEPS);
  const e2 = new Engine([v2], {}, STEPS);
  const e1b = new Engine([v1b.model], {}, STEPS);
  // v1: one at the wait (with its reminder timer), one with its prepare job pending.
  const waiting = await start(e1, 'case-handling', 'C-wait', { caseId: 'C-wait' });
  await runAll(e1, waiting.jobs);
  started.waiting = waiting.instance.id;
  started.inFlight = (await start(e1, 'case-handling', 'C-job', { caseId: 'C-job' })).instance.id;
  // v2: one completed.
  const done = await start(e2, 'case-handling', 'C-done', { caseId: 'C-done' });
  await runAll(e2, done.jobs);
  const approved = await approve(e2, 'C-done');
  await runAll(e2, approved.result.kind === 'CORRELATED' ? approved.result.jobs : []);
  started.done = done.instance.id;
  // v1b, never stored: at the wait.
  const unstored = await start(e1b, 'case-handling', 'C-old', { caseId: 'C-old' });
  await runAll(e1b, unstored.jobs);
  started.unstored = unstored.instance.id;
  // A multi-instance activity: the parent waits for its two items, each an instance of its own.
  const parent = await start(new Engine([inspection], {}, new Set(['inspect'])), 'fixture-inspection', 'P-1', {
    parts: ['a', 'b'],
  });
  started.parent = parent.instance.id;
  started.items = (
    await db.collection(COLLECTIONS.instances).where('processKey', '==', 'fixture-inspection#inspect').get()
  ).docs.map((d) => d.id);
});

describe('inbox versions', () => {
  test('each version with its instances by status and its live tokens by activity; one never stored is listed and said', async () => {
    const r = await report('case-handling');
    expect(r.processes).toEqual([
      { processKey: 'case-handling', deployedVersion: null, scanned: 3, scanLimit: 5000, capped: false },
    ]);
    // Stored ones by first deployment, then the one never stored.
    expect(r.versions.map((v) => [v.version, v.stored])).toEqual([
      [v1.version, true],
      [v2.version, true],
      [v1b.model.version, false],
    ]);
    expect(row(r, v1.version)).toMatchObject({
      deployed: false,
      instances: { running: 2, incident: 0, completed: 0 },
      items: { running: 0, incident: 0, completed: 0 },
      waiting: { waitApproval: 1, prepare: 1 },
    });
    expect(row(r, v1.version)?.firstDeployedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(row(r, v2.version)).toMatchObject({ instances: { running: 0, incident: 0, completed: 1 }, waiting: {} });
    expect(row(r, v1b.model.version)).toMatchObject({
      firstDeployedAt: null,
      instances: { running: 1, incident: 0, completed: 0 },
      waiting: { waitApproval: 1 },
    });

    const table = await cli('versions', 'case-handling');
    expect(table.code).toBe(0);
    expect(table.out).toContain(v1.version.slice(0, 8));
    expect(table.out).not.toContain(v1.version);
    expect(table.out).toContain('prepare 1, waitApproval 1');
    expect(table.out).toContain(
      `version ${v1b.model.version} of case-handling is not stored: its instances run on the deployed model; register its XML with \`inbox versions --register FILE\``,
    );
  });

  test('multi-instance items are counted under their parent process and version', async () => {
    expect(started.items).toHaveLength(2);
    const r = await report('fixture-inspection');
    expect(r.versions).toEqual([
      expect.objectContaining({
        version: inspection.version,
        instances: { running: 1, incident: 0, completed: 0 },
        items: { running: 2, incident: 0, completed: 0 },
        waiting: { inspect: 1 },
        itemsWaiting: { inspect: 2 },
      }),
    ]);
    expect(r.processes[0]?.scanned).toBe(3);
  });

  test('every process, the deployed version marked; a capped read is said', async () => {
    const all = await report();
    const deployed = (await loadProcessModel(join(FIXTURE_MODELS, 'fixture-process.bpmn'))).version;
    expect(all.versions.filter((v) => v.deployed).map((v) => v.processKey)).toContain('fixture-process');
    expect(all.versions.find((v) => v.processKey === 'fixture-process' && v.deployed)?.version).toBe(deployed);
    expect(all.versions.map((v) => v.processKey)).toEqual(
      expect.arrayContaining(['case-handling', 'fixture-inspection']),
    );

    const capped = await report('case-handling', '--scan-limit', '1');
    expect(capped.processes[0]).toMatchObject({ scanned: 1, capped: true });
    const table = await cli('versions', 'case-handling', '--scan-limit', '1');
    expect(table.out).toContain('case-handling: read the first 1 live instances only');
    expect((await cli('versions', 'case-handling', '--scan-limit', 'many')).code).toBe(2);
    const none = await cli('versions', 'no-such-process');
    expect(none.code).toBe(1);
    expect(none.err).toContain('no version of process no-such-process');
  });
});

describe('inbox versions --retire', () => {
  test('refused while live instances use it, naming them, their pending job and timer; nothing deleted', async () => {
    const refused = await cli('versions', '--retire', v1.version.slice(0, 8));
    expect(refused.code).toBe(1);
    const timers = await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', started.waiting).get();
    const jobs = Object.keys(((await refs.instance(db, started.inFlight).get()).get('jobs') ?? {}) as object);
    expect(refused.err).toContain(`version ${v1.version} of case-handling is still used by 2 live instances`);
    for (const id of [started.waiting, started.inFlight, ...jobs, ...timers.docs.map((d) => d.id)])
      expect(refused.err).toContain(id);
    expect(refused.err).toContain('1 pending job');
    expect(refused.err).toContain('1 scheduled timer');
    expect((await versionRef(db, 'case-handling', v1.version).get()).exists).toBe(true);

    const items = await cli('versions', '--retire', inspection.version, 'fixture-inspection');
    expect(items.code).toBe(1);
    expect(items.err).toContain('1 live instance and 2 live item instances');
  });

  test('refused for the version deployed now, for text that is no version, and for a version not stored', async () => {
    const file = join(FIXTURE_MODELS, 'fixture-process.bpmn');
    const deployed = await loadProcessModel(file);
    // The CLI does not store the versions it loads (the functions do): stored as a function would.
    await registerVersions(db, [deployed], async () => readFile(file, 'utf8'), new Date());
    const now = await cli('versions', '--retire', deployed.version);
    expect(now.code).toBe(1);
    expect(now.err).toContain('is the one deployed now');
    expect((await cli('versions', '--retire', 'v1')).code).toBe(2);
    const unknown = await cli('versions', '--retire', '00000000');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no stored version 00000000');
  });

  test('a version nothing uses: previewed, held to its preview, retired', async () => {
    const preview = await cli('versions', '--retire', v2.version.slice(0, 10), 'case-handling', '--dry-run');
    expect(preview.code).toBe(0);
    expect(preview.out).toContain(`would retire version ${v2.version} of case-handling`);
    const expect1 = /--expect '([^']+)'/.exec(preview.out)?.[1] ?? '';
    expect(expect1).toMatch(/^version:process=case-handling;version=/);
    expect((await versionRef(db, 'case-handling', v2.version).get()).exists).toBe(true);

    // Stored again meanwhile (retired by someone else and deployed again): not the version the preview read.
    await versionRef(db, 'case-handling', v2.version).delete();
    const xml2 = await readFile(join(DIR, 'v2.bpmn'), 'utf8');
    await registerVersions(db, [v2], async () => xml2, new Date(Date.now() + 60_000));
    const moved = await cli('versions', '--retire', v2.version, '--expect', expect1);
    expect(moved.code).toBe(1);
    expect(moved.err).toContain('changed since the preview');
    expect((await versionRef(db, 'case-handling', v2.version).get()).exists).toBe(true);

    const again = await cli('--json', 'versions', '--retire', v2.version, '--dry-run');
    const line = (again.json() as { expect: string }).expect;
    const done = await cli('versions', '--retire', v2.version, '--expect', line);
    expect(done.code).toBe(0);
    expect(done.out).toContain(v2.version);
    expect((await versionRef(db, 'case-handling', v2.version).get()).exists).toBe(false);
    // Its completed instance keeps its record.
    expect((await refs.instance(db, started.done).get()).get('status')).toBe('COMPLETED');
    expect((await cli('versions', '--retire', v2.version)).code).toBe(1);
  });
});

describe('inbox explain', () => {
  test('names the version of each instance it shows: whether it is deployed and stored', async () => {
    const registry = [
      {
        name: 'Approved',
        nameAttribute: DEFAULT_NAME_ATTRIBUTE,
        schema: z.object({ caseId: z.string() }),
        correlationKey: (p: { caseId: string }) => p.caseId,
        dedupKey: (p: { caseId: string }) => `Approved:${p.caseId}`,
      },
    ];
    const stored = await storePushed(db, { name: 'Approved', registry, payload: { caseId: 'C-wait' } });
    const unstored = await storePushed(db, { name: 'Approved', registry, payload: { caseId: 'C-old' } });
    const one = (await cli('--json', 'explain', stored)).json() as { versions: string[] };
    expect(one.versions).toEqual([
      `instance ${started.waiting} runs process case-handling version ${v1.version.slice(0, 8)}: its process is not deployed by this app, stored`,
    ]);
    const other = await cli('explain', unstored);
    expect(other.code).toBe(0);
    expect(other.out).toContain(
      `instance ${started.unstored} runs process case-handling version ${v1b.model.version.slice(0, 8)}: its process is not deployed by this app, never stored: it runs on the deployed model`,
    );
  });
});

describe('inbox versions --register', () => {
  test('stores the version of a model file once; the live instances of that version are counted', async () => {
    const file = join(tmp, 'case-handling-old.bpmn');
    writeFileSync(file, v1b.xml);
    const first = await cli('--json', 'versions', '--register', file);
    expect(first.code).toBe(0);
    expect(first.json()).toMatchObject({
      processKey: 'case-handling',
      version: v1b.model.version,
      stored: 'now',
      liveInstances: 1,
    });
    expect((await versionRef(db, 'case-handling', v1b.model.version).get()).exists).toBe(true);
    const second = await cli('versions', '--register', file);
    expect(second.code).toBe(0);
    expect(second.out).toContain('already');
    expect(row(await report('case-handling'), v1b.model.version)?.stored).toBe(true);
  });

  test('a file that does not load or cannot be read stores nothing', async () => {
    const bad = join(tmp, 'bad.bpmn');
    writeFileSync(bad, '<not-bpmn/>');
    const refused = await cli('versions', '--register', bad);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('does not load as a model');
    expect((await cli('versions', '--register', join(tmp, 'missing.bpmn'))).code).toBe(2);
    expect((await cli('versions', 'case-handling', '--register', bad)).code).toBe(2);
  });
});
