import { emulatorClient, startCloudTasksEmulator, type CloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../functions/src/config';
import { timerQueue, type JobQueue } from '../../functions/src/tasks/job-queue';
import { waitFor } from '../support/wait';

/**
 * The production queue adapter (the real @google-cloud/tasks client) against
 * the Cloud Tasks emulator: a timer's task is named after the timer, POSTs
 * `{ timerId }` to fireTimer with the tasks account's OIDC token, and is not
 * dispatched before its scheduleTime; a time past Cloud Tasks' 720 h limit is
 * refused as the real API refuses it.
 */
const PROJECT = 'timer-queue';
const INVALID_ARGUMENT = 3;
const TASKS_ACCOUNT = `inbox-tasks@${PROJECT}.iam.gserviceaccount.com`;

interface Arrival {
  readonly at: number;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
}

let emulator: CloudTasksEmulator;
let server: http.Server;
let url: string;
let queue: JobQueue;
const arrivals: Arrival[] = [];

beforeAll(async () => {
  emulator = await startCloudTasksEmulator();
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrivals.push({ at: Date.now(), body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.statusCode = 200;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const config = loadConfig({
    GOOGLE_CLOUD_PROJECT: PROJECT,
    INBOX_TASKS_EMULATOR_HOST: emulator.host,
    INBOX_TASKS_SERVICE_ACCOUNT: TASKS_ACCOUNT,
    INBOX_FIRE_TIMER_URL: url,
  });
  const admin = emulatorClient(emulator.host);
  await admin.createQueue({
    parent: `projects/${PROJECT}/locations/${config.tasks.location}`,
    queue: { name: `projects/${PROJECT}/locations/${config.tasks.location}/queues/${config.tasks.timersQueue}` },
  });
  await admin.close();
  queue = timerQueue(config, url);
});

afterAll(async () => {
  await emulator.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const timerIdOf = (n: number): string => n.toString(16).padStart(40, 'a');

test('a timer task waits for its scheduleTime, then POSTs { timerId } to fireTimer with the tasks account token', async () => {
  const timerId = timerIdOf(1);
  const dueAt = new Date(Date.now() + 1_500);
  expect(await queue.enqueue(timerId, { scheduleTime: dueAt })).toBe('CREATED');
  const [task] = emulator.tasks('process-timers');
  expect(task).toMatchObject({
    name: `projects/${PROJECT}/locations/europe-west1/queues/process-timers/tasks/${timerId}`,
    url,
    method: 'POST',
  });
  expect(task?.scheduleTime.getTime()).toBe(dueAt.getTime());
  expect(task?.authRequested).toEqual({ kind: 'oidc', serviceAccountEmail: TASKS_ACCOUNT, audience: url });
  // The name is the timer's: a second dispatch of the same timer creates nothing.
  expect(await queue.enqueue(timerId, { scheduleTime: dueAt })).toBe('EXISTS');

  const arrival = await waitFor('the timer task', async () => arrivals.find((a) => a.body.includes(timerId)));
  expect(arrival.at).toBeGreaterThanOrEqual(dueAt.getTime());
  expect(JSON.parse(arrival.body)).toEqual({ timerId });
  expect(arrival.headers['content-type']).toBe('application/json');
  expect(arrival.headers.authorization).toMatch(/^Bearer /);
});

test('without a scheduleTime the task runs at once', async () => {
  const timerId = timerIdOf(2);
  const before = Date.now();
  expect(await queue.enqueue(timerId)).toBe('CREATED');
  const arrival = await waitFor('the task', async () => arrivals.find((a) => a.body.includes(timerId)));
  expect(arrival.at - before).toBeLessThan(1_000);
});

test('a scheduleTime more than 30 days ahead is refused (INVALID_ARGUMENT) and creates nothing', async () => {
  const timerId = timerIdOf(3);
  await expect(
    queue.enqueue(timerId, { scheduleTime: new Date(Date.now() + 31 * 24 * 60 * 60_000) }),
  ).rejects.toMatchObject({ code: INVALID_ARGUMENT });
  expect(emulator.tasks('process-timers').some((t) => t.name.endsWith(timerId))).toBe(false);
});
