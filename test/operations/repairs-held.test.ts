import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { isRefusal } from '../../functions/src/operations/refused';
import { runRepairRequest } from '../../functions/src/operations/repairs';
import type { Actor, OperationsDeps, RepairOutcome, RepairRequest } from '../../functions/src/operations/types';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { cliFor } from '../cli/run-cli';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { operationsDepsFor } from '../support/operations';
import { completionPayload, storePushed } from '../support/inbox';
import { jobsOf, tokenOf } from '../support/process-state';

/**
 * A repair confirmed after its preview does what the preview showed, or
 * nothing: the preview returns what it read (its basis), the confirmation
 * sends it back, and the repair's transaction refuses when that changed.
 * And a request id is bound to its repair: reused for another, it is
 * refused, never taken for "already applied".
 */
const dbs = freshFirestores();
const HOUR = 3_600_000;
const ACTOR: Actor = { id: 'ops@example.com', via: 'console' };
let engine: Engine;

beforeAll(async () => {
  engine = await fixtureEngine();
});

const depsFor = (db: Firestore, projectId: string): OperationsDeps => operationsDepsFor(db, projectId, engine).deps;

const relayDeps = (db: Firestore): RelayDeps => ({
  db,
  engine,
  policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * HOUR, errorAfterAttempts: 3 },
  retentionMs: 86_400_000,
  transactionTimeoutMs: 20_000,
  now: () => new Date(),
  random: () => 0.5,
});

/** A case whose token waits at "Wait for completion". */
async function waitingOrder(db: Firestore, caseId: string): Promise<{ instanceId: string; executionId: string }> {
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
  return { instanceId: started.instance.id, executionId: started.instance.activeExecutionIds[0]! };
}

/** The completion arrives and correlates: the token moves on to "Settle". */
async function completionCorrelates(db: Firestore, caseId: string): Promise<void> {
  const id = await storePushed(db, {
    name: 'TaskCompleted',
    payload: completionPayload(caseId),
    receivedAt: new Date(),
  });
  const result = await relayOne(relayDeps(db), id);
  expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE' } });
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err: unknown = await promise.then(
    () => new Error('not refused'),
    (e: unknown) => e,
  );
  expect(isRefusal(err)).toBe(true);
  return (err as Error).message;
}

const confirm = (deps: OperationsDeps, request: RepairRequest, preview: RepairOutcome): Promise<RepairOutcome> =>
  runRepairRequest(deps, request, {
    preview: false,
    actor: ACTOR,
    requestId: 'req-confirm',
    ...(preview.basis === null ? {} : { expect: preview.basis }),
  });

describe('a confirmation is held to its preview', () => {
  test('cancel-token: previewed at "Wait for completion", the completion moves the token to "Settle", Confirm is refused and the settlement job still runs', async () => {
    const { db, projectId } = dbs.project('held-cancel');
    const deps = depsFor(db, projectId);
    const { instanceId, executionId } = await waitingOrder(db, 'C-held-cancel');
    const request: RepairRequest = { kind: 'cancel-token', instanceId, executionId };
    const preview = await runRepairRequest(deps, request, { preview: true, actor: ACTOR, requestId: 'req-confirm' });
    expect(preview.basis).toEqual({
      subject: 'token',
      facts: { at: 'waitForCompletion', step: expect.any(String), status: 'WAITING_MESSAGE' },
    });
    expect(preview.expect).toMatch(/^token:at=waitForCompletion;step=\d+;status=WAITING_MESSAGE$/);

    await completionCorrelates(db, 'C-held-cancel');
    const why = await refusal(confirm(deps, request, preview));
    expect(why).toMatch(
      /^refused: the token moved from Wait for completion \(waitForCompletion\) to Settle \(settle\) since the preview: nothing was done/,
    );
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({ activityId: 'settle', status: 'WAITING_JOB' });
    expect((await jobsOf(db, instanceId)).filter((j) => j.activityId === 'settle')).toEqual([
      expect.objectContaining({ status: 'PENDING' }),
    ]);
    const stored = (await db.doc(`processInstances/${instanceId}`).get()).data() as {
      status: string;
      repairs?: unknown[];
    };
    expect(stored.status).toBe('RUNNING');
    expect(stored.repairs ?? []).toEqual([]);
  });

  test('cancel-token: unchanged since the preview, Confirm does exactly what was previewed', async () => {
    const { db, projectId } = dbs.project('held-cancel-same');
    const deps = depsFor(db, projectId);
    const { instanceId, executionId } = await waitingOrder(db, 'C-held-same');
    const request: RepairRequest = { kind: 'cancel-token', instanceId, executionId };
    const preview = await runRepairRequest(deps, request, { preview: true, actor: ACTOR });
    const done = await confirm(deps, request, preview);
    expect(done).toMatchObject({
      preview: false,
      alreadyApplied: false,
      summary: preview.summary,
      basis: preview.basis,
    });
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({ status: 'CANCELLED' });
  });

  test("move-token: refused once the token moved on; a new token (no execution) is held to the instance's tokens", async () => {
    const { db, projectId } = dbs.project('held-move');
    const deps = depsFor(db, projectId);
    const { instanceId, executionId } = await waitingOrder(db, 'C-held-move');
    const move: RepairRequest = { kind: 'move-token', instanceId, executionId, activityId: 'handOver', force: false };
    const add: RepairRequest = {
      kind: 'move-token',
      instanceId,
      executionId: null,
      activityId: 'settle',
      force: false,
    };
    const movePreview = await runRepairRequest(deps, move, { preview: true, actor: ACTOR });
    const addPreview = await runRepairRequest(deps, add, { preview: true, actor: ACTOR });
    expect(addPreview.basis).toEqual({
      subject: 'tokens',
      facts: { status: 'RUNNING', tokens: expect.stringContaining(`${executionId}@waitForCompletion#`) },
    });
    await completionCorrelates(db, 'C-held-move');
    expect(await refusal(confirm(deps, move, movePreview))).toMatch(
      /^refused: the token moved from Wait for completion \(waitForCompletion\) to Settle \(settle\) since the preview/,
    );
    expect(await refusal(confirm(deps, add, addPreview))).toMatch(
      /^refused: the instance's tokens changed since the preview/,
    );
    expect((await db.doc(`processInstances/${instanceId}`).get()).get('activeExecutionIds')).toEqual([executionId]);
  });

  test('resolve-incident: a new incident raised after the preview is not resolved unseen', async () => {
    const { db, projectId } = dbs.project('held-resolve');
    const deps = depsFor(db, projectId);
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-held-resolve',
      variables: { caseId: 'C-held-resolve' },
      now: new Date(),
    });
    const instanceId = started.instance.id;
    const executionId = started.instance.activeExecutionIds[0]!;
    await recordJobFailure(db, started.jobs[0]!, 'provider refused', 3, new Date(), { final: true });
    // The operator cancels the failed step's token, previews the resolve; meanwhile a second token is added and fails too.
    await runRepairRequest(deps, { kind: 'cancel-token', instanceId, executionId }, { preview: false, actor: ACTOR });
    const request: RepairRequest = { kind: 'resolve-incident', instanceId, note: 'settled with the provider' };
    const preview = await runRepairRequest(deps, request, { preview: true, actor: ACTOR });
    expect(preview.basis).toEqual({ subject: 'incidents', facts: { status: 'INCIDENT', open: 'JOB_FAILED@handOver' } });
    const added = await runRepairRequest(
      deps,
      { kind: 'move-token', instanceId, executionId: null, activityId: 'settle', force: false },
      { preview: false, actor: ACTOR },
    );
    expect(added.jobs).toBe(1);
    const settlementJob = (await jobsOf(db, instanceId)).find(
      (j) => j.activityId === 'settle' && j.status === 'PENDING',
    );
    await recordJobFailure(db, settlementJob!, 'storage refused', 3, new Date(), { final: true });
    expect(await refusal(confirm(deps, request, preview))).toMatch(
      /^refused: the instance's incidents changed since the preview \(then INCIDENT, open JOB_FAILED@handOver; now INCIDENT, open JOB_FAILED@handOver,JOB_FAILED@settle\)/,
    );
  });

  test('requeue: a document parked again for another reason since the preview is not requeued', async () => {
    const { db, projectId } = dbs.project('held-requeue');
    const deps = depsFor(db, projectId);
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-held-requeue'),
      receivedAt: new Date(Date.now() - 30 * HOUR),
    });
    await relayOne(relayDeps(db), id);
    const request: RepairRequest = { kind: 'requeue', id };
    const preview = await runRepairRequest(deps, request, { preview: true, actor: ACTOR });
    expect(preview.basis).toEqual({ subject: 'document', facts: { status: 'PARKED', reason: 'NO_WAITING_INSTANCE' } });
    // Another operator requeues it and parks it by hand.
    await runRepairRequest(deps, request, { preview: false, actor: ACTOR });
    await runRepairRequest(deps, { kind: 'park', id, text: 'held for the provider' }, { preview: false, actor: ACTOR });
    expect(await refusal(confirm(deps, request, preview))).toMatch(
      /^refused: the document is PARKED MANUAL now, PARKED NO_WAITING_INSTANCE at the preview/,
    );
    expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('PARKED');
  });
});

describe('a request id is bound to its repair', () => {
  test("a move-token's id reused for a cancel-token is refused, and the token is not cancelled", async () => {
    const { db, projectId } = dbs.project('bound-kind');
    const deps = depsFor(db, projectId);
    const { instanceId, executionId } = await waitingOrder(db, 'C-bound-kind');
    await runRepairRequest(
      deps,
      { kind: 'move-token', instanceId, executionId, activityId: 'waitForCompletion', force: false },
      { preview: false, actor: ACTOR, requestId: 'req-X' },
    );
    const why = await refusal(
      runRepairRequest(
        deps,
        { kind: 'cancel-token', instanceId, executionId },
        { preview: false, actor: ACTOR, requestId: 'req-X' },
      ),
    );
    expect(why).toMatch(
      new RegExp(
        `^refused: request id req-X was used for another repair \\(move-token ${executionId} to waitForCompletion\\) at .+: nothing was done$`,
      ),
    );
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({ status: 'WAITING_MESSAGE' });
  });

  test('the same kind for another token is refused; the same request again is "already applied"', async () => {
    const { db, projectId } = dbs.project('bound-target');
    const deps = depsFor(db, projectId);
    const { instanceId, executionId } = await waitingOrder(db, 'C-bound-target');
    const added = await runRepairRequest(
      deps,
      { kind: 'move-token', instanceId, executionId: null, activityId: 'settle', force: false },
      { preview: false, actor: ACTOR, requestId: 'req-add' },
    );
    expect(added.alreadyApplied).toBe(false);
    const cancel = (e: string): Promise<RepairOutcome> =>
      runRepairRequest(
        deps,
        { kind: 'cancel-token', instanceId, executionId: e },
        { preview: false, actor: ACTOR, requestId: 'req-Y' },
      );
    expect((await cancel(executionId)).alreadyApplied).toBe(false);
    expect((await cancel(executionId)).alreadyApplied).toBe(true);
    const other = ((await db.doc(`processInstances/${instanceId}`).get()).get('activeExecutionIds') as string[])[0]!;
    expect(await refusal(cancel(other))).toMatch(
      /^refused: request id req-Y was used for another repair \(cancel-token /,
    );
    expect(await tokenOf(db, instanceId, other)).toMatchObject({ status: 'WAITING_JOB' });
  });
});

describe('the CLI: --dry-run prints the --expect line, the real run is held to it', () => {
  test('the line the dry run printed refuses once the token moved; without --expect the run reads and acts as before', async () => {
    const { db, projectId } = dbs.project('held-cli');
    const inbox = cliFor(projectId);
    const { instanceId, executionId } = await waitingOrder(db, 'C-held-cli');
    const dry = await inbox(
      'repair',
      'cancel-token',
      '--instance',
      instanceId,
      '--execution',
      executionId,
      '--dry-run',
    );
    expect(dry.code).toBe(0);
    const line = /--expect '([^']+)'/.exec(dry.out)?.[1];
    expect(line).toMatch(/^token:at=waitForCompletion;step=\d+;status=WAITING_MESSAGE$/);
    await completionCorrelates(db, 'C-held-cli');
    const held = await inbox(
      'repair',
      'cancel-token',
      '--instance',
      instanceId,
      '--execution',
      executionId,
      '--expect',
      line!,
    );
    expect(held.code).toBe(1);
    expect(held.err).toMatch(
      /the token moved from Wait for completion \(waitForCompletion\) to Settle \(settle\) since the preview/,
    );
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({ activityId: 'settle', status: 'WAITING_JOB' });
    expect(
      (
        await inbox(
          'repair',
          'cancel-token',
          '--instance',
          instanceId,
          '--execution',
          executionId,
          '--expect',
          'not a line',
        )
      ).code,
    ).toBe(2);
    expect((await inbox('repair', 'cancel-token', '--instance', instanceId, '--execution', executionId)).code).toBe(0);
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({ status: 'CANCELLED' });
  });
});
