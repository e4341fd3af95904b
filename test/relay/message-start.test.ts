import type { Firestore } from '@google-cloud/firestore';
import type { Subscription } from '@google-cloud/pubsub';
import { join } from 'node:path';
import request from 'supertest';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { instanceId } from '../../functions/src/engine/ids';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { INBOX } from '../../functions/src/inbox/document';
import { PROCESSED } from '../../functions/src/inbox/processed';
import { dispatchJobs } from '../../functions/src/jobs/dispatch';
import { createLogger } from '../../functions/src/log';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { commitFaults, writes } from '../support/commit-faults';
import { REPO_ROOT } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { startProcessStack, subscribeCounterpart, type ProcessStack } from '../support/process-stack';
import { base64Json, completionEnvelope, envelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { expireAsTtlWould } from '../support/ttl';
import { waitFor } from '../support/wait';
import { jobOf } from '../support/process-state';
import { SETTLEMENTS } from '../support/app';

/**
 * Message start events through the inbox: a TaskOpened pushed to the
 * receiver and relayed starts the instance of fixture-opening.bpmn in
 * the transaction that marks it DONE; a second release is parked
 * ALREADY_STARTED; a completion that overtook its release is held by
 * nobody and holds nobody up: the release starts the instance, the token
 * takes the completion from the buffer, one settlement.
 */
const PROCESS = 'fixture-opening';
const DAY = 86_400_000;
const firestore = freshFirestores();
const { db, projectId } = firestore.project('relay-start');
const policy: RelayPolicy = {
  backoffBaseMs: 60_000,
  backoffCapMs: 600_000,
  bufferWindowMs: DAY,
  errorAfterAttempts: 3,
};
let engine: Engine;
let receiver: ReturnType<typeof testReceiver>;
let stack: ProcessStack;
let counterpart: Subscription;
/** The case ids the counterpart received a hand-over for. */
const handedOver: string[] = [];
const logs: Array<Record<string, unknown>> = [];
const log = createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>));

beforeAll(async () => {
  const model = await loadProcessModel(join(REPO_ROOT, 'test', 'fixtures', 'bpmn', 'fixture-opening.bpmn'));
  engine = new Engine([model], {}, new Set(['handOver', 'settle']), inboxBuffer(7 * DAY));
  receiver = testReceiver(db);
  stack = await startProcessStack(db, projectId, { runJob: { engine: async () => engine } });
  counterpart = await subscribeCounterpart(stack, (m) => handedOver.push(String(m.attributes.caseId)));
});
firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await counterpart?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await stack?.stop();
});

const deps = (over: Partial<RelayDeps> = {}): RelayDeps => ({
  db,
  engine,
  policy,
  retentionMs: 7 * DAY,
  transactionTimeoutMs: 20_000,
  now: () => new Date(),
  random: () => 0.5,
  ...over,
});
const push = async (body: Record<string, unknown>, on: Firestore = db): Promise<Record<string, unknown>> =>
  (
    await request(on === db ? receiver.server : testReceiver(on).server)
      .post('/')
      .send(body)
  ).body as Record<string, unknown>;
const releaseEnvelope = (
  caseId: string,
  eventId: string,
  extra: Record<string, unknown> = {},
  publishTime?: Date,
): Record<string, unknown> =>
  envelope({
    data: base64Json({ caseId, eventId, openedAt: '2026-12-01T08:00:00Z', plannedItems: 4, ...extra }),
    attributes: { eventType: 'TaskOpened' },
    ...(publishTime === undefined ? {} : { publishTime: publishTime.toISOString() }),
  });
const inboxDoc = async (id: string, on: Firestore = db): Promise<Record<string, unknown>> =>
  (await on.collection(INBOX).doc(id).get()).data() ?? {};
const instanceDoc = async (id: string): Promise<Record<string, unknown>> =>
  (await refs.instance(db, id).get()).data() ?? {};
const lane = async (key: string): Promise<string[]> =>
  ((await refs.correlationKey(db, key).get()).get('open') as Array<{ inboxId: string }> | undefined)?.map(
    (e) => e.inboxId,
  ) ?? [];

describe('a start message through the inbox', () => {
  test('relayed, a TaskOpened starts its instance in the transaction that makes it DONE; its redelivery is a duplicate', async () => {
    const key = 'C-start-1';
    const first = releaseEnvelope(key, 'rel-1');
    const stored = await push(first);
    expect(stored).toMatchObject({ outcome: 'stored', status: 'OPEN' });
    const id = String(stored.id);
    const result = await relayOne(deps(), id);
    const started = instanceId(PROCESS, key);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE', processInstanceId: started } });
    if (result.kind !== 'DECIDED') return;
    // The new job is reported, to be dispatched after the commit like a correlation's.
    expect(result.jobs.map((j) => j.activityId)).toEqual(['handOver']);
    expect(await jobOf(db, started, result.jobs[0]!.id)).toMatchObject({
      status: 'PENDING',
      processInstanceId: started,
      activityId: 'handOver',
    });
    expect(await inboxDoc(id)).toMatchObject({ status: 'DONE', correlatedVia: 'START', processInstanceId: started });
    expect(await instanceDoc(started)).toMatchObject({
      processKey: PROCESS,
      businessKey: key,
      status: 'RUNNING',
      startedByMessage: id,
      correlatedMessages: [id],
      variables: { caseId: key, eventId: 'rel-1', openedAt: '2026-12-01T08:00:00Z', plannedItems: 4 },
    });
    expect((await db.collection(PROCESSED).doc(id).get()).data()).toMatchObject({
      processInstanceId: started,
      correlatedVia: 'START',
    });
    expect(await lane(key)).toEqual([]);

    expect(await push(first)).toEqual({ outcome: 'duplicate', id });
    // After the DONE document's TTL, its processed record keeps the redelivery a duplicate: no second start.
    await expireAsTtlWould(db, new Date(Date.now() + 8 * DAY));
    expect((await db.collection(INBOX).doc(id).get()).exists).toBe(false);
    expect(await push(first)).toEqual({ outcome: 'duplicate', id });
    expect(await lane(key)).toEqual([]);
  });

  test('a second release of the case (another eventId): PARKED ALREADY_STARTED at once, the instance named, logged at ERROR like every park', async () => {
    const on = firestore('relay-start-again');
    const key = 'C-start-2';
    const firstId = String((await push(releaseEnvelope(key, 'rel-a'), on)).id);
    const summary1 = await relayBatch({ ...deps(), db: on }, stack.queues, log, {
      budgetMs: 20_000,
      parallelism: 2,
      batchSize: 20,
      shards: 16,
    });
    expect(summary1.correlated).toBe(1);
    const secondId = String((await push(releaseEnvelope(key, 'rel-b', { plannedItems: 9 }), on)).id);
    const summary2 = await relayBatch({ ...deps(), db: on }, stack.queues, log, {
      budgetMs: 20_000,
      parallelism: 2,
      batchSize: 20,
      shards: 16,
    });
    expect(summary2.parked).toEqual({ ALREADY_STARTED: 1 });
    const started = instanceId(PROCESS, key);
    expect(await inboxDoc(secondId, on)).toMatchObject({
      status: 'PARKED',
      reason: 'ALREADY_STARTED',
      attempts: 1,
      payload: expect.objectContaining({ plannedItems: 9 }),
      parkDetails: { processInstanceId: started, processKey: PROCESS, instanceStatus: 'RUNNING' },
    });
    expect(logs).toContainEqual(
      expect.objectContaining({
        severity: 'ERROR',
        message: 'inbox document parked',
        inboxId: secondId,
        reason: 'ALREADY_STARTED',
      }),
    );
    // The instance is untouched by the second release.
    const instance = (await refs.instance(on, started).get()).data() ?? {};
    expect(instance).toMatchObject({
      startedByMessage: firstId,
      correlatedMessages: [firstId],
      variables: expect.objectContaining({ plannedItems: 4 }),
    });
  });

  test('a start whose commit landed and then reported UNAVAILABLE: reported as the start with its job, not as ALREADY_STARTED', async () => {
    const on = firestore('relay-start-landed');
    const id = String((await push(releaseEnvelope('C-start-landed', 'rel-1'), on)).id);
    const faults = commitFaults(on);
    faults.afterLanding((commit) => writes(commit, `inbox/${id}`), { kind: 'UNAVAILABLE' });
    const result = await relayOne({ ...deps(), db: on }, id);
    faults.restore();
    expect(faults.fired()).toBe(1);
    expect(result).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'DONE', processInstanceId: instanceId(PROCESS, 'C-start-landed') },
      jobs: [expect.objectContaining({ activityId: 'handOver' })],
    });
    expect(await inboxDoc(id, on)).toMatchObject({ status: 'DONE', correlatedVia: 'START' });
  });

  test('variables the process cannot run with: PARKED START_REFUSED with the door check, no instance', async () => {
    const on = firestore('relay-start-refused');
    // Its later wait correlates on orderId, which a release does not carry: the token would stop there for good.
    const model = await parseProcessModel(`<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn" id="d" targetNamespace="urn:test">
  <bpmn:message id="rel" name="TaskOpened" /><bpmn:message id="done" name="TaskCompleted" />
  <bpmn:process id="needs-order" isExecutable="true">
    <bpmn:startEvent id="released" inbox:correlationKey="caseId"><bpmn:messageEventDefinition messageRef="rel" /></bpmn:startEvent>
    <bpmn:receiveTask id="wait" messageRef="done" inbox:correlationKey="orderId" />
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="released" targetRef="wait" /><bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end" />
  </bpmn:process>
</bpmn:definitions>`);
    const id = String((await push(releaseEnvelope('C-start-3', 'rel-x'), on)).id);
    const result = await relayOne({ ...deps(), db: on, engine: new Engine([model], {}, new Set()) }, id);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'PARK', reason: 'START_REFUSED' } });
    expect(await inboxDoc(id, on)).toMatchObject({
      status: 'PARKED',
      reason: 'START_REFUSED',
      parkDetails: {
        processKey: 'needs-order',
        activityId: 'released',
        problem: expect.stringContaining('variables.orderId is required'),
      },
    });
    expect((await on.collection(COLLECTIONS.instances).get()).size).toBe(0);
  });
});

describe('per-key order and start messages', () => {
  test('a completion relayed before its release: the release is not held behind it, the token takes it from the buffer, one settlement', async () => {
    const key = 'C-start-overtaken';
    const t0 = new Date(Date.now() - 60_000);
    const completionId = String(
      (await push(completionEnvelope({ caseId: key, completedItems: 3 }, { publishTime: t0.toISOString() }))).id,
    );
    expect(await relayOne(deps(), completionId)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'RETRY' } });
    const releaseId = String((await push(releaseEnvelope(key, 'rel-late', {}, new Date(t0.getTime() + 1_000)))).id);
    expect(await lane(key)).toEqual([completionId, releaseId]);

    // The completion is the oldest OPEN document of the key, and it waits for the instance this release starts.
    const result = await relayOne(deps(), releaseId);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE' } });
    if (result.kind !== 'DECIDED') return;
    expect(await lane(key)).toEqual([completionId]);
    expect(await dispatchJobs(stack.queue, result.jobs, log)).toBe(1);

    const started = instanceId(PROCESS, key);
    const done = await waitFor('the instance to complete', async () => {
      const instance = await instanceDoc(started);
      return instance.status === 'COMPLETED' ? instance : undefined;
    });
    expect(done.correlatedMessages).toEqual([releaseId, completionId]);
    await waitFor('the hand-over at the counterpart', async () => (handedOver.includes(key) ? true : undefined));
    expect(done.variables).toMatchObject({ caseId: key, completedItems: 3 });
    expect(await inboxDoc(completionId)).toMatchObject({
      status: 'DONE',
      correlatedVia: 'BUFFER',
      processInstanceId: started,
    });
    const settlements = await db.collection(SETTLEMENTS).where('caseId', '==', key).get();
    expect(settlements.docs.map((d) => d.get('processInstanceId'))).toEqual([started]);
    expect(await lane(key)).toEqual([]);
  });

  test('two releases of one case keep their order: the younger waits for the older, which starts; then the younger is parked', async () => {
    const key = 'C-start-order';
    const t0 = new Date(Date.now() - 60_000);
    const olderId = String((await push(releaseEnvelope(key, 'rel-1', {}, t0))).id);
    const youngerId = String((await push(releaseEnvelope(key, 'rel-2', {}, new Date(t0.getTime() + 1_000)))).id);
    expect(await relayOne(deps(), youngerId)).toMatchObject({ kind: 'ORDER_BLOCKED', olderId });
    expect(await relayOne(deps(), olderId)).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'DONE', processInstanceId: instanceId(PROCESS, key) },
    });
    expect(await relayOne(deps(), youngerId)).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'PARK', reason: 'ALREADY_STARTED' },
    });
  });

  test('once the instance exists, a release behind an older OPEN completion waits its turn as any message does', async () => {
    const key = 'C-start-exists';
    const t0 = new Date(Date.now() - 60_000);
    const firstId = String((await push(releaseEnvelope(key, 'rel-1', {}, t0))).id);
    expect(await relayOne(deps(), firstId)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE' } });
    // The token is still at the hand-over: the completion finds no waiting point and stays OPEN.
    const completionId = String(
      (await push(completionEnvelope({ caseId: key }, { publishTime: new Date(t0.getTime() + 1_000).toISOString() })))
        .id,
    );
    expect(await relayOne(deps(), completionId)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'RETRY' } });
    const againId = String((await push(releaseEnvelope(key, 'rel-2', {}, new Date(t0.getTime() + 2_000)))).id);
    expect(await relayOne(deps(), againId)).toMatchObject({ kind: 'ORDER_BLOCKED', olderId: completionId });
  });
});
