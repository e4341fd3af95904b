import { readFileSync } from 'node:fs';
import { PubSub } from '@google-cloud/pubsub';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { controlClient, serveControl } from '../../tools/local/control';
import { topicOf } from '../../tools/local/peers';
import { startLocalStack, type LocalStack } from '../../tools/local/stack';
import { freshFirestores } from '../support/firestore';
import { connectResult } from '../support/net';
import { waitFor } from '../support/wait';
import { FIXTURE_APP, FIXTURE_APP_SUMMARY, settlementRef } from '../support/app';

/**
 * `npm start`'s stack on the test run's emulators (reused, so an outage only
 * cuts the line), running the fixture app with its counterpart (its
 * local.ts): a case goes the whole way through HTTP, Cloud Tasks, Pub/Sub
 * and the counterpart, and the control API answers.
 */
jest.setTimeout(120_000);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('stack');
let stack: LocalStack;
let control: { url: string; close(): Promise<void> };

beforeAll(async () => {
  stack = await startLocalStack({ projectId, app: FIXTURE_APP, peers: { delayMs: 100 }, relayEveryMs: 500 });
  control = await serveControl(stack);
});
firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await control?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await stack?.stop();
});

async function startCase(caseId: string): Promise<Response> {
  const { functions } = await stack.info();
  return fetch(functions.startProcess, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ processKey: 'fixture-process', businessKey: caseId, variables: { caseId } }),
  });
}

async function completedWithSettlement(caseId: string): Promise<unknown> {
  return waitFor(
    `${caseId} to be completed and settled`,
    async () => {
      const instances = await db.collection(COLLECTIONS.instances).where('businessKey', '==', caseId).get();
      const settlement = await settlementRef(db, caseId).get();
      return instances.docs[0]?.get('status') === 'COMPLETED' && settlement.exists ? settlement.data() : undefined;
    },
    { timeoutMs: 60_000, everyMs: 200 },
  );
}

test('a case goes from startProcess through the counterpart back to a settlement', async () => {
  expect(await stack.info()).toMatchObject({
    app: FIXTURE_APP,
    topology: { app: 'fixture', publishes: ['fixture-outbox'] },
  });
  expect((await startCase('C-stack-1')).status).toBe(201);
  expect(await completedWithSettlement('C-stack-1')).toMatchObject({ caseId: 'C-stack-1' });
  const status = await stack.status();
  expect(status.peers).toMatchObject({ handedOver: 1, completionsPublished: 1, failures: 0 });
  expect(status.relaySchedule.calls).toBeGreaterThan(0);
  // A push may be answered 503 when its write outlasts INBOX_WRITE_TIMEOUT_MS (1 s here) on a loaded machine: a
  // technical failure, logged at WARNING, that Pub/Sub redelivers; the one settlement above shows nothing was lost or
  // doubled. What must never happen is an unexpected failure (ERROR) or a refusal of the counterpart's completion.
  expect(status.functions.receivePubSubPush.errors).toBe(0);
});

test('a TaskOpened published on its topic starts the case, which the counterpart then completes', async () => {
  const { topology, pubsubHost } = await stack.info();
  const pubsub = new PubSub({ projectId, apiEndpoint: pubsubHost });
  try {
    const opened = { caseId: 'C-stack-rel', eventId: 'rel-1', openedAt: '2026-12-01T08:00:00Z' };
    await pubsub
      .topic(topicOf(topology, 'TaskOpened'))
      .publishMessage({ json: opened, attributes: { eventType: 'TaskOpened' } });
  } finally {
    await pubsub.close();
  }
  expect(await completedWithSettlement('C-stack-rel')).toMatchObject({ caseId: 'C-stack-rel' });
  const instances = await db.collection(COLLECTIONS.instances).where('businessKey', '==', 'C-stack-rel').get();
  expect(instances.docs.map((d) => d.get('processKey') as unknown)).toEqual(['fixture-process']);
});

test("runJob and fireTimer check their caller's OIDC token, as deployed: the case above passed with the emulator's, a bare POST does not", async () => {
  const { functions } = await stack.info();
  const res = await fetch(functions.runJob, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jobId: 'a'.repeat(40) }),
  });
  expect(res.status).toBe(401);
  const timer = await fetch(functions.fireTimer, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ timerId: 'a'.repeat(40) }),
  });
  expect(timer.status).toBe(401);
});

test("the timers queue is there: a task on it reaches fireTimer with the emulator's token, and an unknown timer ends it with 200", async () => {
  const { tasksHost, functions } = await stack.info();
  const { CloudTasksClient } = await import('@google-cloud/tasks');
  const { emulatorClientOptions } = await import('@inbox/cloud-tasks-emulator');
  const client = new CloudTasksClient(emulatorClientOptions(tasksHost));
  try {
    const queue = `projects/${projectId}/locations/europe-west1/queues/process-timers`;
    const timerId = 'c'.repeat(40);
    await client.createTask({
      parent: queue,
      task: {
        name: `${queue}/tasks/${timerId}`,
        httpRequest: {
          httpMethod: 'POST',
          url: functions.fireTimer,
          headers: { 'Content-Type': 'application/json' },
          body: Buffer.from(JSON.stringify({ timerId })),
          oidcToken: {
            serviceAccountEmail: `inbox-tasks@${projectId}.iam.gserviceaccount.com`,
            audience: functions.fireTimer,
          },
        },
      },
    });
    const { logDir } = await stack.info();
    // The token passed (a refused one is never read as a timer id), and the firing found no such timer.
    const line = await waitFor('fireTimer to answer the task', async () =>
      readFileSync(join(logDir, 'fireTimer.log'), 'utf8')
        .split('\n')
        .find((l) => l.includes(timerId)),
    );
    expect(JSON.parse(line)).toMatchObject({
      severity: 'INFO',
      function: 'fireTimer',
      timerId,
      message: expect.stringContaining('not found'),
    });
    expect((await stack.status()).functions.fireTimer.errors).toBe(0);
  } finally {
    await client.close();
  }
});

test('the control API serves the same calls, refuses bad input with a JSON error, and an outage heals', async () => {
  const client = controlClient(control.url);
  expect(await client.info()).toEqual(await stack.info());
  const bad = await fetch(`${control.url}/receiver-line`, { method: 'POST', body: '{"mode":"sideways"}' });
  expect(bad.status).toBe(400);
  expect(await bad.json()).toEqual({ error: 'mode: "forward" or "refuse"' });
  expect((await fetch(`${control.url}/nope`)).status).toBe(404);
  // Reused emulators are not ours to restart: the outage cuts every function's line instead.
  // (Called in process: the line is cut before the call returns its promise, so the next request meets the outage.)
  let outageEnded = 0;
  const outage = stack.firestoreOutage(1_500).then((report) => {
    outageEnded = Date.now();
    return report;
  });
  // startProcess's Firestore client retries a refused connection, so the request started now
  // answers only once the line is back: it cannot have been served during the outage.
  const during = await startCase('C-stack-2');
  const answeredAt = Date.now();
  expect(await outage).toMatchObject({ kind: 'REFUSED', downMs: 1_500 });
  expect(answeredAt).toBeGreaterThanOrEqual(outageEnded);
  expect([201, 503]).toContain(during.status);
  expect((await startCase('C-stack-2')).status).toBe(during.status === 201 ? 200 : 201);
  await completedWithSettlement('C-stack-2');
  expect((await client.status()).outages).toBe(1);
});

test('the operator console runs with local access on 127.0.0.1 only: the local operator, a repairer, no sign-in', async () => {
  const { consoleUrl } = await stack.info();
  expect(new URL(consoleUrl).hostname).toBe('127.0.0.1');
  const res = await fetch(new URL('api/whoami', consoleUrl));
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({
    id: 'local operator',
    role: 'repairer',
    access: 'local',
    projectId,
    app: FIXTURE_APP_SUMMARY,
  });
  // Not listening on the machine's other addresses (where it has any): nothing else can connect.
  const port = new URL(consoleUrl).port;
  const others = Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => a.family === 'IPv4' && !a.internal);
  for (const address of others) expect(await connectResult(`${address.address}:${port}`)).not.toBe('connected');
});

test("the storage emulator runs beside the others with the payload bucket and the senders' bucket created", async () => {
  const { storageUrl, buckets } = await stack.info();
  expect(buckets).toEqual({ payloads: `${projectId}-inbox-payloads`, senders: `${projectId}-sender-objects` });
  const { Storage } = await import('@google-cloud/storage');
  const client = new Storage({ projectId, apiEndpoint: storageUrl });
  for (const name of [buckets.payloads, buckets.senders]) {
    const [meta] = await client.bucket(name).getMetadata();
    expect(meta.name).toBe(name);
  }
  expect(stack.storage.objects(buckets.payloads)).toEqual([]);
});
