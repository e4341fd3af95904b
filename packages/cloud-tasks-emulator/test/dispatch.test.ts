import type { CloudTasksClient } from '@google-cloud/tasks';
import type { CloudTasksEmulator } from '../src';
import { codeOf, deadUrl, delay, uniqueQueue, startSuite, stopSuite, waitFor, PARENT, type Target } from './helpers';

jest.setTimeout(60_000);

const ALREADY_EXISTS = 6;
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

let emulator: CloudTasksEmulator;
let client: CloudTasksClient;
let target: Target;

beforeAll(async () => {
  ({ emulator, client, target } = await startSuite());
});

afterAll(() => stopSuite({ emulator, client, target }));

beforeEach(() => {
  target.received.length = 0;
  target.respondWith(() => 200);
  emulator.clearFaults();
});

/** A fresh queue that retries fast: 0.1 s, 0.2 s, 0.4 s, ... */
async function fastQueue(maxAttempts = 5, extra: { maxConcurrentDispatches?: number } = {}): Promise<string> {
  const name = uniqueQueue();
  await client.createQueue({
    parent: PARENT,
    queue: {
      name,
      retryConfig: { maxAttempts, minBackoff: { seconds: 0, nanos: 100_000_000 }, maxBackoff: { seconds: 10 } },
      rateLimits: { maxConcurrentDispatches: extra.maxConcurrentDispatches ?? 0 },
    },
  });
  return name;
}

const attemptsOf = (task: string): number => emulator.dispatchLog.filter((d) => d.task === task).length;

it('dispatches a named task with its method, body and headers plus the X-CloudTasks-* headers', async () => {
  const queue = await fastQueue();
  const name = `${queue}/tasks/order-42_step-1`;
  const [created] = await client.createTask({
    parent: queue,
    task: {
      name,
      httpRequest: {
        url: `${target.base}/steps/1?x=y`,
        httpMethod: 'PUT',
        headers: {
          'Content-Type': 'application/json',
          'X-Trace': 'abc',
          'X-CloudTasks-TaskName': 'spoofed',
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        },
        body: Buffer.from('{"hello":"world"}'),
      },
    },
  });
  expect(created).toMatchObject({ name, dispatchCount: 0, responseCount: 0, view: 'BASIC' });
  // BASIC view: the body is not returned.
  expect(created.httpRequest?.body?.length ?? 0).toBe(0);

  await emulator.idle();
  expect(target.received).toHaveLength(1);
  const [req] = target.received;
  expect(req).toMatchObject({ method: 'PUT', path: '/steps/1?x=y', body: '{"hello":"world"}' });
  expect(req?.headers).toMatchObject({
    'content-type': 'application/json',
    'x-trace': 'abc',
    // W3C trace context passes as any header does: the target's span continues the creator's trace.
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    'user-agent': 'Google-Cloud-Tasks',
    'x-cloudtasks-queuename': queue.split('/').pop(),
    'x-cloudtasks-taskname': 'order-42_step-1',
    'x-cloudtasks-taskretrycount': '0',
    'x-cloudtasks-taskexecutioncount': '0',
  });
  const eta = Number(req?.headers['x-cloudtasks-tasketa']);
  expect(eta * 1000).toBeCloseTo(
    Number(created.scheduleTime?.seconds) * 1000 + (created.scheduleTime?.nanos ?? 0) / 1e6,
    -1,
  );

  // Completed: gone, and its name stays taken.
  expect(await codeOf(client.getTask({ name }))).toBe(NOT_FOUND);
  expect(await codeOf(client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } }))).toBe(
    ALREADY_EXISTS,
  );
  expect(emulator.dispatchLog.find((d) => d.task === name)).toMatchObject({
    status: 200,
    attempt: 1,
    outcome: 'completed',
  });
});

it('gives unnamed tasks a generated id and answers ALREADY_EXISTS for a live duplicate name', async () => {
  const queue = await fastQueue();
  await client.pauseQueue({ name: queue });
  const [unnamed] = await client.createTask({ parent: queue, task: { httpRequest: { url: `${target.base}/u` } } });
  expect(unnamed.name).toMatch(new RegExp(`^${queue}/tasks/\\d+$`));
  const name = `${queue}/tasks/dup`;
  await client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } });
  expect(await codeOf(client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } }))).toBe(
    ALREADY_EXISTS,
  );
  await client.resumeQueue({ name: queue });
  await emulator.idle();
  expect(target.received.map((r) => r.headers['x-cloudtasks-taskname']).sort()).toEqual(
    ['dup', unnamed.name?.split('/').pop()].sort(),
  );
});

it('retries a failing target with growing backoff and counts retries in the headers', async () => {
  const queue = await fastQueue();
  target.respondWith((_, i) => (i < 2 ? 503 : 200));
  const name = `${queue}/tasks/flaky`;
  await client.createTask({ parent: queue, task: { name, httpRequest: { url: `${target.base}/flaky` } } });
  await emulator.idle();

  expect(target.received).toHaveLength(3);
  expect(target.received.map((r) => r.headers['x-cloudtasks-taskretrycount'])).toEqual(['0', '1', '2']);
  // 5xx answers do not count as executions.
  expect(target.received.map((r) => r.headers['x-cloudtasks-taskexecutioncount'])).toEqual(['0', '0', '0']);
  expect(target.received.map((r) => r.headers['x-cloudtasks-taskpreviousresponse'])).toEqual([undefined, '503', '503']);
  const [a, b, c] = target.received.map((r) => r.at);
  const gap1 = (b ?? 0) - (a ?? 0);
  const gap2 = (c ?? 0) - (b ?? 0);
  expect(gap1).toBeGreaterThanOrEqual(90); // minBackoff 0.1 s
  expect(gap2).toBeGreaterThanOrEqual(190); // doubled
  expect(gap2).toBeGreaterThan(gap1);
  expect(emulator.dispatchLog.filter((d) => d.task === name).map((d) => d.outcome)).toEqual([
    'retrying',
    'retrying',
    'completed',
  ]);
});

it('deletes the task after maxAttempts and makes no further attempt', async () => {
  const queue = await fastQueue(2);
  target.respondWith(() => 500);
  const name = `${queue}/tasks/doomed`;
  await client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } });
  await emulator.idle();
  expect(target.received).toHaveLength(2);
  expect(emulator.dispatchLog.filter((d) => d.task === name).map((d) => d.outcome)).toEqual(['retrying', 'gave-up']);
  expect(emulator.tasks(queue)).toEqual([]);
  expect(await codeOf(client.getTask({ name }))).toBe(NOT_FOUND);
  // The name of a task that ran out of attempts stays taken, too.
  expect(await codeOf(client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } }))).toBe(
    ALREADY_EXISTS,
  );
});

it('numbers the attempts in the headers so a target can tell the last one (retry count = maxAttempts - 1), and counts non-5xx answers as executions', async () => {
  const queue = await fastQueue(4);
  // 503, 429, 503, 500: the task gives up after its 4th attempt; only the 429 reached "execution".
  const answers = [503, 429, 503, 500];
  target.respondWith((_, i) => answers[i] ?? 200);
  const name = `${queue}/tasks/last-attempt`;
  await client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } });
  await emulator.idle();
  expect(target.received.map((r) => r.headers['x-cloudtasks-taskretrycount'])).toEqual(['0', '1', '2', '3']);
  expect(target.received.map((r) => r.headers['x-cloudtasks-taskexecutioncount'])).toEqual(['0', '0', '1', '1']);
  expect(target.received.map((r) => r.headers['x-cloudtasks-taskpreviousresponse'])).toEqual([
    undefined,
    '503',
    '429',
    '503',
  ]);
  // runJob's rule: retry count + 1 >= maxAttempts is the last attempt, after which the task is gone.
  expect(emulator.dispatchLog.filter((d) => d.task === name).map((d) => [d.attempt, d.outcome])).toEqual([
    [1, 'retrying'],
    [2, 'retrying'],
    [3, 'retrying'],
    [4, 'gave-up'],
  ]);
});

it('counts a connection error as a failed attempt', async () => {
  const queue = await fastQueue(1);
  const name = `${queue}/tasks/unreachable`;
  await client.createTask({ parent: queue, task: { name, httpRequest: { url: await deadUrl() } } });
  await emulator.idle();
  const [attempt] = emulator.dispatchLog.filter((d) => d.task === name);
  expect(attempt).toMatchObject({ outcome: 'gave-up', injected: false });
  expect(attempt?.status).toBeUndefined();
  expect(attempt?.error).toMatch(/ECONNREFUSED/);
});

it('waits for a future scheduleTime', async () => {
  const queue = await fastQueue();
  const dueMs = Date.now() + 1500;
  const name = `${queue}/tasks/later`;
  await client.createTask({
    parent: queue,
    task: {
      name,
      scheduleTime: { seconds: Math.floor(dueMs / 1000), nanos: (dueMs % 1000) * 1e6 },
      httpRequest: { url: target.base },
    },
  });
  const [pending] = await client.getTask({ name });
  expect(pending.dispatchCount).toBe(0);
  expect(target.received).toHaveLength(0);
  await emulator.idle();
  expect(target.received).toHaveLength(1);
  expect(target.received[0]?.at).toBeGreaterThanOrEqual(dueMs);
});

it('refuses a scheduleTime more than 720 h ahead, as Cloud Tasks does, and takes one just inside it', async () => {
  const queue = await fastQueue();
  const at = (ms: number): { seconds: number; nanos: number } => ({
    seconds: Math.floor(ms / 1000),
    nanos: (ms % 1000) * 1e6,
  });
  const hours720 = 720 * 60 * 60_000;
  const tooFar = Date.now() + hours720 + 60_000;
  const refused = client.createTask({
    parent: queue,
    task: { name: `${queue}/tasks/too-far`, scheduleTime: at(tooFar), httpRequest: { url: target.base } },
  });
  await expect(refused).rejects.toMatchObject({
    code: INVALID_ARGUMENT,
    details: expect.stringMatching(/is too far in the future\. Schedule time must be no more than 720h in the future/),
  });
  // Refused means nothing was created: the name is still free.
  expect(emulator.tasks(queue).map((t) => t.name)).toEqual([]);
  const inside = Date.now() + hours720 - 60_000;
  const [created] = await client.createTask({
    parent: queue,
    task: { name: `${queue}/tasks/too-far`, scheduleTime: at(inside), httpRequest: { url: target.base } },
  });
  expect(Number(created.scheduleTime?.seconds)).toBe(Math.floor(inside / 1000));
  await client.deleteTask({ name: created.name ?? '' });
});

it('honours maxConcurrentDispatches', async () => {
  const queue = await fastQueue(5, { maxConcurrentDispatches: 1 });
  target.respondWith(async () => {
    await delay(50); // the handler takes a while, so overlapping dispatches would show
    return 200;
  });
  for (let i = 0; i < 4; i++) await client.createTask({ parent: queue, task: { httpRequest: { url: target.base } } });
  await emulator.idle();
  expect(target.received).toHaveLength(4);
  expect(target.concurrency.max).toBe(1);
});

it('injects dispatch failures without calling the target', async () => {
  const queue = await fastQueue();
  emulator.failDispatches(2);
  const name = `${queue}/tasks/chaos`;
  await client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } });
  await emulator.idle();
  expect(emulator.dispatchLog.filter((d) => d.task === name).map((d) => [d.status, d.injected])).toEqual([
    [503, true],
    [503, true],
    [200, false],
  ]);
  expect(target.received.map((r) => r.headers['x-cloudtasks-taskretrycount'])).toEqual(['2']);

  // Filter rules stay until removed; 'connection-refused' means no response at all.
  const off = emulator.failDispatches((a) => a.task.endsWith('/blocked'), 'connection-refused');
  await client.createTask({
    parent: queue,
    task: { name: `${queue}/tasks/blocked`, httpRequest: { url: target.base } },
  });
  await waitFor(() => attemptsOf(`${queue}/tasks/blocked`) >= 2, 'two refused attempts');
  off();
  await emulator.idle();
  const blocked = emulator.dispatchLog.filter((d) => d.task === `${queue}/tasks/blocked`);
  expect(blocked.at(-1)).toMatchObject({ status: 200, injected: false, outcome: 'completed' });
  expect(blocked.slice(0, -1).every((d) => d.injected && d.error !== undefined)).toBe(true);
});

it("records a requested OIDC token and sends one signed for its account and audience instead of the caller's", async () => {
  const queue = await fastQueue();
  await client.pauseQueue({ name: queue });
  const name = `${queue}/tasks/oidc`;
  await client.createTask({
    parent: queue,
    task: {
      name,
      httpRequest: {
        url: `${target.base}/secure`,
        headers: { Authorization: 'Bearer caller-supplied' },
        oidcToken: {
          serviceAccountEmail: 'invoker@test-project.iam.gserviceaccount.com',
          audience: 'https://handler.example',
        },
      },
    },
  });
  expect(emulator.tasks(queue)[0]?.authRequested).toEqual({
    kind: 'oidc',
    serviceAccountEmail: 'invoker@test-project.iam.gserviceaccount.com',
    audience: 'https://handler.example',
  });
  const [listed] = await client.getTask({ name });
  expect(listed.httpRequest?.oidcToken?.audience).toBe('https://handler.example');
  await client.resumeQueue({ name: queue });
  await emulator.idle();
  // The token replaces the caller's Authorization header (its signature is checked in oidc.test.ts).
  const [, payload] = /^Bearer [^.]+\.([^.]+)\.[^.]+$/.exec(target.received[0]?.headers.authorization ?? '') ?? [];
  expect(JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'))).toMatchObject({
    iss: emulator.oidc.issuer,
    aud: 'https://handler.example',
    email: 'invoker@test-project.iam.gserviceaccount.com',
  });
});

it('RunTask dispatches at once, even from a paused queue', async () => {
  const queue = await fastQueue();
  await client.pauseQueue({ name: queue });
  const name = `${queue}/tasks/run-me`;
  await client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } });
  const [ran] = await client.runTask({ name });
  expect(ran.dispatchCount).toBe(1);
  await waitFor(() => emulator.tasks(queue).length === 0, 'the forced run to complete');
  expect(target.received).toHaveLength(1);
});
