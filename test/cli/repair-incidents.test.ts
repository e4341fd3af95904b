import { runCli } from '../../functions/src/cli/main';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { FIXTURE_ENV } from '../support/app';

/** `inbox repair resolve-incident` and `inbox incidents [--all]` against the emulator, in a project of their own. */
const { db, projectId } = freshFirestores().project('cli-incidents');
let engine: Engine;

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string; json: () => unknown }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    args,
    { out: (t) => out.push(t), err: (t) => err.push(t), confirm: async () => false },
    { ...process.env, ...FIXTURE_ENV, GOOGLE_CLOUD_PROJECT: projectId },
  );
  return { code, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) as unknown };
}

interface Listed {
  incidents: Array<{ instance: string; reason: string; resolvedAt?: string | null; resolution?: string | null }>;
  failedJobs: Array<{ id: string; processInstanceId: string }>;
}
const listed = async (...flags: string[]): Promise<Listed> =>
  (await cli('--json', 'incidents', ...flags)).json() as Listed;
const reasonsOf = (l: Listed, instance: string): string[] =>
  l.incidents.filter((i) => i.instance === instance).map((i) => i.reason);
const stored = async (id: string): Promise<Record<string, unknown>> => (await refs.instance(db, id).get()).data() ?? {};

/** A case whose token waits for TaskCompleted under `caseId`. */
async function waiting(
  businessKey: string,
  caseId = businessKey,
): Promise<{ instanceId: string; executionId: string }> {
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
  return { instanceId: started.instance.id, executionId: started.instance.activeExecutionIds[0]! };
}

beforeAll(async () => {
  engine = await fixtureEngine();
});

describe('inbox repair resolve-incident and inbox incidents', () => {
  test('a double token: refused while both wait; after cancelling one token, resolved (RUNNING / COMPLETED) and listed with --all only', async () => {
    const a = await waiting('C-res-a', 'C-res');
    const b = await waiting('C-res-b', 'C-res');
    expect(reasonsOf(await listed(), a.instanceId)).toEqual(['DUPLICATE_WAITING_POINT']);
    expect(reasonsOf(await listed(), b.instanceId)).toEqual(['DUPLICATE_WAITING_POINT']);

    const refused = await cli('repair', 'resolve-incident', a.instanceId);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`and so does ${b.executionId} of ${b.instanceId}: cancel one`);
    expect(await stored(a.instanceId)).toMatchObject({
      status: 'INCIDENT',
      incidents: [expect.not.objectContaining({ resolvedAt: expect.anything() })],
    });

    // B was the wrong one: cancel its token. B has no token left, A's is the only waiting point.
    expect((await cli('repair', 'cancel-token', '--instance', b.instanceId, '--execution', b.executionId)).code).toBe(
      0,
    );
    const resolvedA = await cli(
      '--json',
      'repair',
      'resolve-incident',
      a.instanceId,
      '--note',
      'C-res-b was a second start of C-res',
    );
    expect(resolvedA.err).toBe('');
    expect(resolvedA.code).toBe(0);
    expect(resolvedA.json()).toMatchObject({ resolved: 1, instance: { id: a.instanceId, status: 'RUNNING' } });
    const resolvedB = await cli('--json', 'repair', 'resolve-incident', b.instanceId);
    expect(resolvedB.json()).toMatchObject({ resolved: 1, instance: { status: 'COMPLETED' } });

    expect(await stored(a.instanceId)).toMatchObject({
      status: 'RUNNING',
      resolvedIncidents: 1,
      incidents: [
        expect.objectContaining({
          reason: 'DUPLICATE_WAITING_POINT',
          resolvedAt: expect.anything(),
          resolution: 'C-res-b was a second start of C-res',
        }),
      ],
    });
    const open = await listed();
    expect(reasonsOf(open, a.instanceId)).toEqual([]);
    expect(reasonsOf(open, b.instanceId)).toEqual([]);
    const all = await listed('--all');
    expect(all.incidents.find((i) => i.instance === a.instanceId)).toMatchObject({
      reason: 'DUPLICATE_WAITING_POINT',
      resolution: 'C-res-b was a second start of C-res',
      resolvedAt: expect.any(String),
    });
    expect(reasonsOf(all, b.instanceId)).toEqual(['DUPLICATE_WAITING_POINT']);
    // The table marks the resolution.
    expect((await cli('incidents', '--all')).out).toContain('C-res-b was a second start of C-res');

    // Nothing left to resolve.
    const again = await cli('repair', 'resolve-incident', a.instanceId);
    expect(again.code).toBe(1);
    expect(again.err).toContain('has no open incident');
    // A duplicate that comes back after the resolution is a new, open incident.
    await moveToken(db, engine, {
      processInstanceId: a.instanceId,
      executionId: a.executionId,
      activityId: 'waitForCompletion',
      force: true,
      now: new Date(),
    });
    expect(reasonsOf(await listed(), a.instanceId)).toEqual([]);
    await moveToken(db, engine, {
      processInstanceId: a.instanceId,
      executionId: null,
      activityId: 'waitForCompletion',
      force: true,
      now: new Date(),
    });
    // One open incident per token involved (both are A's now); the resolved one stays resolved.
    expect(reasonsOf(await listed(), a.instanceId)).toEqual(['DUPLICATE_WAITING_POINT', 'DUPLICATE_WAITING_POINT']);
    expect(reasonsOf(await listed('--all'), a.instanceId)).toHaveLength(3);
    expect(await stored(a.instanceId)).toMatchObject({ status: 'INCIDENT' });
  });

  test('a FAILED job: refused while the token waits for it; after move-token re-runs the step, resolved, and the FAILED job is listed with --all only', async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-res-job',
      variables: { caseId: 'C-res-job' },
      now: new Date(),
    });
    const failed = started.jobs[0]!;
    const executionId = started.instance.activeExecutionIds[0]!;
    expect(await recordJobFailure(db, failed, 'provider down', 10, new Date(), { final: true })).toMatchObject({
      status: 'FAILED',
    });
    const before = await listed();
    expect(reasonsOf(before, started.instance.id)).toEqual(['JOB_FAILED']);
    expect(before.failedJobs.map((j) => j.id)).toContain(failed.id);

    const refused = await cli('repair', 'resolve-incident', started.instance.id);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`for FAILED job ${failed.id}`);
    expect(await stored(started.instance.id)).toMatchObject({ status: 'INCIDENT' });

    // The runbook's repair: put the token back on the step (a new job), then resolve.
    expect(
      (
        await cli(
          'repair',
          'move-token',
          '--instance',
          started.instance.id,
          '--execution',
          executionId,
          '--activity',
          'handOver',
        )
      ).code,
    ).toBe(0);
    const resolved = await cli(
      '--json',
      'repair',
      'resolve-incident',
      started.instance.id,
      '--note',
      'topic recreated',
    );
    expect(resolved.code).toBe(0);
    expect(resolved.json()).toMatchObject({ resolved: 1, instance: { status: 'RUNNING' } });

    const after = await listed();
    expect(reasonsOf(after, started.instance.id)).toEqual([]);
    expect(after.failedJobs.map((j) => j.id)).not.toContain(failed.id);
    const all = await listed('--all');
    expect(all.failedJobs.map((j) => j.id)).toContain(failed.id);
    expect(all.incidents.find((i) => i.instance === started.instance.id)).toMatchObject({
      reason: 'JOB_FAILED',
      resolution: 'topic recreated',
    });
  });

  test('refused for an unknown instance and for one that never had an incident', async () => {
    const unknown = await cli('repair', 'resolve-incident', 'f'.repeat(40));
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('does not exist');
    const { instanceId } = await waiting('C-res-fine');
    const fine = await cli('repair', 'resolve-incident', instanceId);
    expect(fine.code).toBe(1);
    expect(fine.err).toContain('has no open incident');
    expect(await stored(instanceId)).toMatchObject({ status: 'RUNNING', incidents: [] });
    expect((await cli('repair', 'resolve-incident')).code).toBe(2);
  });

  test('--dry-run of park, move-token, cancel-token, resolve-incident: the summary and the planned writes, nothing changed; a refusal exits 1', async () => {
    const { instanceId, executionId } = await waiting('C-dry');
    const before = await stored(instanceId);
    const cancel = await cli(
      'repair',
      'cancel-token',
      '--instance',
      instanceId,
      '--execution',
      executionId,
      '--dry-run',
    );
    expect(cancel.code).toBe(0);
    expect(cancel.out).toContain(`would cancel token ${executionId} at`);
    expect(cancel.out).toContain(`processInstances/${instanceId}`);
    expect(cancel.out).toContain('dry run: nothing changed');
    const move = (
      await cli('--json', 'repair', 'move-token', '--instance', instanceId, '--activity', 'handOver', '--dry-run')
    ).json() as { preview: boolean; summary: string; writes: Array<{ path: string }> };
    expect(move).toMatchObject({ preview: true, kind: 'move-token', alreadyApplied: false });
    expect(move.writes.map((w) => w.path)).toContain(`processInstances/${instanceId}`);
    expect(await stored(instanceId)).toEqual(before);
    const resolve = await cli('repair', 'resolve-incident', instanceId, '--dry-run');
    expect(resolve.code).toBe(1);
    expect(resolve.err).toContain('has no open incident');
    const park = await cli('park', 'no-such-doc', '--reason', 'x', '--dry-run');
    expect(park.code).toBe(1);
    expect(park.err).toContain('no inbox document no-such-doc');
    // The real cancel still does what the dry run said.
    expect((await cli('repair', 'cancel-token', '--instance', instanceId, '--execution', executionId)).code).toBe(0);
    expect(await stored(instanceId)).not.toEqual(before);
  });
});
