import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { isRefusal } from '../../functions/src/operations/refused';
import { runRepairRequest } from '../../functions/src/operations/repairs';
import type { Actor, RepairRequest } from '../../functions/src/operations/types';
import { relayOne } from '../../functions/src/relay/relay-one';
import { commitFaults, writes } from '../support/commit-faults';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { operationsDepsFor } from '../support/operations';
import { completionPayload, storePushed } from '../support/inbox';

/** operations/repairs.ts against the emulator: a preview is the real transaction, rolled back. */
const dbs = freshFirestores();
const HOUR = 3_600_000;
const ACTOR: Actor = { id: 'ops@example.com', via: 'console' };
let engine: Engine;

beforeAll(async () => {
  engine = await fixtureEngine();
});

const depsFor = (db: Firestore, projectId: string): ReturnType<typeof operationsDepsFor> =>
  operationsDepsFor(db, projectId, engine);

/** Every document of every collection (subcollections of the instances included), with its update time: the whole project, byte for byte. */
async function everything(db: Firestore): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (collections: FirebaseFirestore.CollectionReference[]): Promise<void> => {
    for (const c of collections) {
      for (const d of (await c.get()).docs) {
        out[d.ref.path] = `${d.updateTime.toMillis()} ${JSON.stringify(d.data())}`;
        await walk(await d.ref.listCollections());
      }
    }
  };
  await walk(await db.listCollections());
  return out;
}

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

async function parked(db: Firestore, caseId: string): Promise<string> {
  const id = await storePushed(db, {
    name: 'TaskCompleted',
    payload: completionPayload(caseId),
    receivedAt: new Date(Date.now() - 30 * HOUR),
  });
  await relayOne(
    {
      db,
      engine,
      policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * HOUR, errorAfterAttempts: 3 },
      retentionMs: 86_400_000,
      transactionTimeoutMs: 20_000,
      now: () => new Date(),
      random: () => 0.5,
    },
    id,
  );
  return id;
}

/** Each kind, in a project of its own (so nothing else changes the project between the two snapshots). */
const CASES: Array<[string, (db: Firestore) => Promise<{ request: RepairRequest; record: string }>]> = [
  [
    'requeue',
    async (db) => {
      const id = await parked(db, 'C-ops-requeue');
      return { request: { kind: 'requeue', id }, record: `${INBOX}/${id}` };
    },
  ],
  [
    'park',
    async (db) => {
      const id = await storePushed(db, {
        name: 'TaskCompleted',
        payload: completionPayload('C-ops-park'),
        receivedAt: new Date(),
      });
      return { request: { kind: 'park', id, text: 'held for the provider' }, record: `${INBOX}/${id}` };
    },
  ],
  [
    'move-token',
    async (db) => {
      const { instanceId, executionId } = await waitingOrder(db, 'C-ops-move');
      return {
        request: { kind: 'move-token', instanceId, activityId: 'handOver', executionId, force: false },
        record: `processInstances/${instanceId}`,
      };
    },
  ],
  [
    'cancel-token',
    async (db) => {
      const { instanceId, executionId } = await waitingOrder(db, 'C-ops-cancel');
      return { request: { kind: 'cancel-token', instanceId, executionId }, record: `processInstances/${instanceId}` };
    },
  ],
];

describe('runRepairRequest', () => {
  test.each(CASES)('%s: the preview shows what the real run then does, and changes nothing', async (kind, setUp) => {
    const { db, projectId } = dbs.project(`ops-${kind}`);
    const { deps, lines } = depsFor(db, projectId);
    const { request, record } = await setUp(db);
    const before = await everything(db);
    const preview = await runRepairRequest(deps, request, { preview: true, actor: ACTOR });
    expect(await everything(db)).toEqual(before);
    expect(lines.filter((l) => l.message === 'operator repair')).toEqual([]);
    expect(preview).toMatchObject({
      kind,
      preview: true,
      alreadyApplied: false,
      dispatched: 0,
      timersDispatched: 0,
      by: ACTOR.id,
    });
    expect(preview.writes.length).toBeGreaterThan(0);

    const real = await runRepairRequest(deps, request, { preview: false, actor: ACTOR, requestId: 'req-1' });
    expect(real.summary).toBe(preview.summary);
    const paths = (ws: typeof real.writes): unknown[] =>
      ws.map((w) => ({ path: w.path.replace(/[0-9a-f-]{36}|repair:[^/]+/g, 'ID'), op: w.op, fields: w.fields }));
    expect(paths(real.writes)).toEqual(paths(preview.writes));
    expect(real.writes.map((w) => w.path)).toContain(record);
    expect(await everything(db)).not.toEqual(before);
    const stored = (await db.doc(record).get()).data() as { repairs: Array<Record<string, unknown>> };
    expect(stored.repairs.filter((r) => r.requestId === 'req-1')).toEqual([
      expect.objectContaining({ kind, by: ACTOR.id, via: 'console', at: expect.anything() }),
    ]);
    expect(lines.filter((l) => l.message === 'operator repair')).toEqual([
      expect.objectContaining({
        kind,
        target: real.target,
        by: ACTOR.id,
        via: 'console',
        requestId: 'req-1',
        preview: false,
        alreadyApplied: false,
        writes: real.writes.length,
      }),
    ]);
  });

  test('summaries say what happens in words, with the activity names of the model', async () => {
    const { db, projectId } = dbs.project('ops-words');
    const { deps } = depsFor(db, projectId);
    const id = await parked(db, 'C-ops-words');
    expect((await runRepairRequest(deps, { kind: 'requeue', id }, { preview: true, actor: ACTOR })).summary).toMatch(
      new RegExp(`^requeue ${id}: PARKED \\(\\w+\\) → OPEN, due now$`),
    );
    const { instanceId, executionId } = await waitingOrder(db, 'C-ops-words-2');
    const cancel = await runRepairRequest(
      deps,
      { kind: 'cancel-token', instanceId, executionId },
      { preview: true, actor: ACTOR },
    );
    expect(cancel.summary).toMatch(
      new RegExp(`^cancel token ${executionId} at .+ \\(\\w+\\) of instance ${instanceId}$`),
    );
  });

  test('a refusal in the preview is the refusal of the real run, and nothing changes either way', async () => {
    const { db, projectId } = dbs.project('ops-refused');
    const { deps, lines } = depsFor(db, projectId);
    const a = await waitingOrder(db, 'C-ops-dup-a');
    await waitingOrder(db, 'C-ops-dup-b');
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-ops-open'),
      receivedAt: new Date(),
    });
    const requests: RepairRequest[] = [
      { kind: 'resolve-incident', instanceId: a.instanceId, note: null },
      { kind: 'requeue', id },
      { kind: 'move-token', instanceId: 'no-such-instance', activityId: 'handOver', executionId: null, force: false },
      { kind: 'cancel-token', instanceId: a.instanceId, executionId: 'no-such-token' },
    ];
    for (const request of requests) {
      const before = await everything(db);
      const refusalOf = async (preview: boolean): Promise<string> => {
        const err: unknown = await runRepairRequest(deps, request, { preview, actor: ACTOR }).then(
          () => new Error('not refused'),
          (e: unknown) => e,
        );
        expect(isRefusal(err)).toBe(true);
        return (err as Error).message;
      };
      const previewed = await refusalOf(true);
      expect(await refusalOf(false)).toBe(previewed);
      expect(await everything(db)).toEqual(before);
    }
    expect(lines.filter((l) => l.message === 'operator repair')).toEqual([]);
  });

  test('a commit that landed and reported UNAVAILABLE ends "already applied", recorded once, logged once', async () => {
    const { db, projectId } = dbs.project('ops-landed');
    const { deps, lines } = depsFor(db, projectId);
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-ops-landed'),
      receivedAt: new Date(),
    });
    const faults = commitFaults(db);
    try {
      faults.afterLanding((request) => writes(request, `${INBOX}/${id}`), { kind: 'UNAVAILABLE' });
      const outcome = await runRepairRequest(
        deps,
        { kind: 'park', id, text: 'hold' },
        { preview: false, actor: ACTOR, requestId: 'req-landed' },
      );
      expect(faults.fired()).toBe(1);
      expect(outcome.alreadyApplied).toBe(true);
    } finally {
      faults.restore();
    }
    const stored = (await db.collection(INBOX).doc(id).get()).data() as { status: string; repairs: unknown[] };
    expect(stored.status).toBe('PARKED');
    expect(stored.repairs).toEqual([
      expect.objectContaining({ requestId: 'req-landed', by: ACTOR.id, via: 'console' }),
    ]);
    expect(lines.filter((l) => l.message === 'operator repair')).toEqual([
      expect.objectContaining({ alreadyApplied: true, requestId: 'req-landed' }),
    ]);
  });
});
