/**
 * A requeue checks a document against the app's message schema as deployed
 * now (issue 40): documents stored under the schema-v1 app, parked
 * NO_WAITING_INSTANCE, requeued with the schema-v2 app (its `Approved`
 * requires `amount`). The one without `amount` stays PARKED as
 * INVALID_PAYLOAD naming the field; the one with it goes back OPEN and
 * correlates. Through the real CLI in process, on the Firestore emulator.
 */
import { join } from 'node:path';
import type { App } from '../../functions/src/app';
import { loadAppEngine } from '../../functions/src/apps/app-engine';
import { modelsFolder, registryOf } from '../../functions/src/apps/load-app';
import type { Engine } from '../../functions/src/engine/engine';
import { parseBasis } from '../../functions/src/engine/repair-basis';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { runRepairRequest } from '../../functions/src/operations/repairs';
import { relayOne } from '../../functions/src/relay/relay-one';
import { createGcsPayloadStore } from '../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import V1 from '../fixtures/apps/schema-v1';
import V2 from '../fixtures/apps/schema-v2';
import { REPO_ROOT, stepIdsOf } from '../support/app';
import { storeOffloaded } from '../support/claims';
import { freshFirestores } from '../support/firestore';
import { storePushed } from '../support/inbox';
import { operationsDepsFor } from '../support/operations';
import { useTestStorage } from '../support/storage';
import { cliFor } from './run-cli';

const PAYLOADS = 'inbox-payloads-requeue-schema';
useTestStorage([PAYLOADS]);
const { db, projectId } = freshFirestores().project('cli-requeue-schema');
const HOUR = 3_600_000;
const V1_APP = 'test/fixtures/apps/schema-v1';
const V2_APP = 'test/fixtures/apps/schema-v2';
const cliWith = (app: string) => cliFor(projectId, undefined, { INBOX_APP: app, INBOX_PAYLOAD_BUCKET: PAYLOADS });
let store: PayloadStore;
beforeAll(() => {
  store = createGcsPayloadStore(projectId);
});

const engineOf = (app: App, dir: string): Promise<Engine> => {
  const folder = join(REPO_ROOT, dir);
  return loadAppEngine({ app, folder }, modelsFolder(folder, app, REPO_ROOT), stepIdsOf(app), inboxBuffer(24 * HOUR));
};
const doc = async (id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};

/** One relay pass over the document, `aheadMs` from now (past the day's buffer window: parked if nobody waits). */
const relay = (engine: Engine, id: string, aheadMs = 0) =>
  relayOne(
    {
      db,
      engine,
      policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * HOUR, errorAfterAttempts: 3 },
      retentionMs: 24 * HOUR,
      transactionTimeoutMs: 20_000,
      now: () => new Date(Date.now() + aheadMs),
      random: () => 0.5,
      payloadStore: () => store,
    },
    id,
  );

/** Approved for `caseId`, stored as the v1 receiver read it, parked NO_WAITING_INSTANCE (nobody waited within the buffer window). */
async function parkedUnderV1(engine: Engine, caseId: string, extra: Record<string, unknown>): Promise<string> {
  const id = await storePushed(db, {
    name: 'Approved',
    registry: registryOf(V1),
    payload: { caseId, eventId: `approved-${caseId}`, ...extra },
  });
  await relay(engine, id, 25 * HOUR);
  expect(await doc(id)).toMatchObject({ status: 'PARKED', reason: 'NO_WAITING_INSTANCE' });
  return id;
}

const tokenAt = async (instanceId: string): Promise<{ status: string; tokens: string[] }> => {
  const snap = await refs.instance(db, instanceId).get();
  const tokens = Object.values((snap.get('tokens') ?? {}) as Record<string, { status: string; activityId: string }>);
  return {
    status: String(snap.get('status')),
    tokens: tokens.filter((t) => t.status === 'WAITING_MESSAGE').map((t) => t.activityId),
  };
};

test('a requeue under schema v2 parks the v1 document that lacks amount as INVALID_PAYLOAD, and the one that fits goes OPEN and correlates', async () => {
  const v1 = await engineOf(V1, V1_APP);
  const old = await parkedUnderV1(v1, 'S-old', {});
  const fits = await parkedUnderV1(v1, 'S-fits', { amount: 120 });

  // v2 deployed (the same model, Approved.amount now required); both cases now wait for their Approved.
  const v2 = await engineOf(V2, V2_APP);
  const start = async (caseId: string): Promise<string> =>
    (
      await startProcessInstance(db, v2, {
        processKey: 'approval',
        businessKey: caseId,
        variables: { caseId },
        now: new Date(),
      })
    ).instance.id;
  const oldCase = await start('S-old');
  const fitsCase = await start('S-fits');
  expect((await tokenAt(oldCase)).tokens).toEqual(['waitApproval']);

  const cli = cliWith(V2_APP);
  // The dry run: what would go back OPEN and what would stay parked, with the field; nothing changes.
  const preview = await cli('--json', 'requeue', old, fits, '--dry-run');
  expect(preview.code).toBe(1);
  const would = preview.json() as { wouldRequeue: string[]; wouldPark: Array<{ id: string; why: string }> };
  expect(would.wouldRequeue).toEqual([fits]);
  expect(would.wouldPark.map((p) => p.id)).toEqual([old]);
  expect(would.wouldPark[0]?.why).toMatch(/Approved does not match its schema:[\s\S]*amount/);
  expect(await doc(old)).toMatchObject({ status: 'PARKED', reason: 'NO_WAITING_INSTANCE' });
  expect(await doc(fits)).toMatchObject({ status: 'PARKED', reason: 'NO_WAITING_INSTANCE' });

  const run = await cli('--json', 'requeue', old, fits);
  expect(run.code).toBe(1);
  const ran = run.json() as { requeued: number; parked: Array<{ id: string; reason: string; why: string }> };
  expect(ran.requeued).toBe(1);
  expect(ran.parked.map((p) => [p.id, p.reason])).toEqual([[old, 'INVALID_PAYLOAD']]);
  expect(run.err).toContain(`${old}: stays PARKED as INVALID_PAYLOAD`);
  const reparked = await doc(old);
  expect(reparked).toMatchObject({
    status: 'PARKED',
    reason: 'INVALID_PAYLOAD',
    previousReason: 'NO_WAITING_INSTANCE',
  });
  expect(String(reparked.lastError)).toMatch(/amount/);
  // The payload as it was stored: validated, never rewritten.
  expect(reparked.payload).toEqual({ caseId: 'S-old', eventId: 'approved-S-old' });
  expect(await doc(fits)).toMatchObject({ status: 'OPEN', reason: null, attempts: 0 });

  // explain says why, and that today's schema is what refused it.
  const explained = await cli('explain', old);
  expect(explained.out).toContain("no longer fits the app's message schema as deployed now");

  // The fitting one correlates: its case completes; the other case still waits.
  await relay(v2, fits);
  expect(await doc(fits)).toMatchObject({ status: 'DONE' });
  expect((await tokenAt(fitsCase)).status).toBe('COMPLETED');
  expect(await tokenAt(oldCase)).toEqual({ status: 'RUNNING', tokens: ['waitApproval'] });

  // Rolled back to an app whose schema accepts it, the same requeue reopens it: it is today's schema that decides.
  const back = await cliWith(V1_APP)('--json', 'requeue', old);
  expect(back.code).toBe(0);
  expect(await doc(old)).toMatchObject({ status: 'OPEN', reason: null, previousReason: 'INVALID_PAYLOAD' });
  await relay(v1, old);
  expect(await doc(old)).toMatchObject({ status: 'DONE' });
  expect((await tokenAt(oldCase)).status).toBe('COMPLETED');
}, 60_000);

test("an offloaded payload is checked whole, from its object: the console's preview and run park it; one whose object is gone goes OPEN unchecked", async () => {
  const v1 = await engineOf(V1, V1_APP);
  const offloaded = async (caseId: string) => {
    const stored = await storeOffloaded(db, store, PAYLOADS, { caseId, eventId: `approved-${caseId}` }, new Date(), {
      registry: registryOf(V1),
      name: 'Approved',
    });
    await relay(v1, stored.id, 25 * HOUR);
    expect(await doc(stored.id)).toMatchObject({ status: 'PARKED', reason: 'NO_WAITING_INSTANCE' });
    return stored;
  };
  const misfit = await offloaded('O-old');
  const gone = await offloaded('O-gone');
  expect(await store.delete(gone.offloaded)).toBe('DELETED');

  // The console's repair (operations/repairs.ts) with schema v2: previewed, nothing written; then held to the preview.
  const { deps } = operationsDepsFor(db, projectId, await engineOf(V2, V2_APP));
  const v2deps = { ...deps, registry: () => registryOf(V2), payloadStore: () => store };
  const actor = { id: 'ops@example.com', via: 'console' as const };
  const request = { kind: 'requeue' as const, id: misfit.id };
  const preview = await runRepairRequest(v2deps, request, { preview: true, actor });
  expect(preview.summary).toMatch(/→ PARKED \(INVALID_PAYLOAD\)[\s\S]*amount/);
  expect(await doc(misfit.id)).toMatchObject({ status: 'PARKED', reason: 'NO_WAITING_INSTANCE' });
  const basis = parseBasis(preview.expect ?? '');
  expect(basis).not.toBeNull();
  const done = await runRepairRequest(v2deps, request, {
    preview: false,
    actor,
    ...(basis === null ? {} : { expect: basis }),
  });
  expect(done.summary).toBe(preview.summary);
  expect(await doc(misfit.id)).toMatchObject({ status: 'PARKED', reason: 'INVALID_PAYLOAD' });
  expect(String((await doc(misfit.id)).lastError)).toMatch(/amount/);

  // Its object gone, the payload cannot be read whole: the requeue says so and reopens it (the relay answers for the object).
  const run = await cliWith(V2_APP)('requeue', gone.id);
  expect(run.code).toBe(0);
  expect(run.err).toContain(`${gone.id}: its offloaded payload is MISSING: not checked against today's schema`);
  expect(await doc(gone.id)).toMatchObject({ status: 'OPEN', reason: null });
}, 60_000);
