import type { CloudTasksClient } from '@google-cloud/tasks';
import type { CloudTasksEmulator } from '../src';
import { sendHttp } from '../src/http';
import { codeOf, startTarget, uniqueQueue, startSuite, stopSuite, waitFor, PARENT, type Target } from './helpers';

jest.setTimeout(60_000);

const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;
const UNAVAILABLE = 14;

let emulator: CloudTasksEmulator;
let client: CloudTasksClient;
let target: Target;

beforeAll(async () => {
  // Short tombstones so the reuse-after-expiry test need not wait an hour.
  ({ emulator, client, target } = await startSuite({ tombstoneMs: 300 }));
});

afterAll(() => stopSuite({ emulator, client, target }));

beforeEach(() => {
  target.received.length = 0;
  emulator.clearFaults();
});

describe('queues', () => {
  it('creates a queue with Cloud Tasks defaults and gets it back', async () => {
    const name = uniqueQueue();
    const [created] = await client.createQueue({ parent: PARENT, queue: { name } });
    expect(created).toMatchObject({
      name,
      state: 'RUNNING',
      rateLimits: { maxDispatchesPerSecond: 500, maxBurstSize: 100, maxConcurrentDispatches: 1000 },
      retryConfig: { maxAttempts: 100, maxDoublings: 16, minBackoff: { nanos: 100_000_000 } },
    });
    expect(Number(created.retryConfig?.maxBackoff?.seconds)).toBe(3600);
    const [got] = await client.getQueue({ name });
    expect(got).toEqual(created);
  });

  it('answers ALREADY_EXISTS, NOT_FOUND and INVALID_ARGUMENT like Cloud Tasks', async () => {
    const name = uniqueQueue();
    await client.createQueue({ parent: PARENT, queue: { name } });
    expect(await codeOf(client.createQueue({ parent: PARENT, queue: { name } }))).toBe(ALREADY_EXISTS);
    const unknown = `${PARENT}/queues/no-such-queue`;
    expect(await codeOf(client.getQueue({ name: unknown }))).toBe(NOT_FOUND);
    expect(await codeOf(client.createTask({ parent: unknown, task: { httpRequest: { url: target.base } } }))).toBe(
      NOT_FOUND,
    );
    expect(await codeOf(client.createQueue({ parent: PARENT, queue: { name: `${PARENT}/queues/bad_name` } }))).toBe(
      INVALID_ARGUMENT,
    );
    expect(await codeOf(client.getIamPolicy({ resource: name }))).toBe(12); // UNIMPLEMENTED
  });

  it('updates the retry config through an update mask and lists, pauses, resumes and deletes queues', async () => {
    const name = uniqueQueue('upd');
    await client.createQueue({ parent: PARENT, queue: { name } });
    const [updated] = await client.updateQueue({
      queue: { name, retryConfig: { maxAttempts: 7, minBackoff: { seconds: 2 } } },
      updateMask: { paths: ['retry_config.max_attempts', 'retry_config.min_backoff'] },
    });
    expect(updated.retryConfig).toMatchObject({ maxAttempts: 7, maxDoublings: 16 });
    expect(Number(updated.retryConfig?.minBackoff?.seconds)).toBe(2);

    const [paused] = await client.pauseQueue({ name });
    expect(paused.state).toBe('PAUSED');
    const [pausedOnly] = await client.listQueues({ parent: PARENT, filter: 'state: PAUSED' });
    expect(pausedOnly.map((q) => q.name)).toContain(name);
    expect((await client.resumeQueue({ name }))[0].state).toBe('RUNNING');

    await client.deleteQueue({ name });
    const [all] = await client.listQueues({ parent: PARENT });
    expect(all.map((q) => q.name)).not.toContain(name);
    expect(await codeOf(client.getQueue({ name }))).toBe(NOT_FOUND);
  });
});

describe('tasks', () => {
  it('holds tasks in a paused queue until it is resumed', async () => {
    const queue = uniqueQueue('paused');
    await client.createQueue({ parent: PARENT, queue: { name: queue } });
    await client.pauseQueue({ name: queue });
    await client.createTask({ parent: queue, task: { httpRequest: { url: target.base } } });
    // idle() does not wait for paused queues, so this proves nothing was sent.
    await emulator.idle();
    expect(target.received).toHaveLength(0);
    expect(emulator.tasks(queue)).toHaveLength(1);
    expect(emulator.tasks(queue)[0]?.dispatchCount).toBe(0);

    await client.resumeQueue({ name: queue });
    await emulator.idle();
    expect(target.received).toHaveLength(1);
    expect(emulator.tasks(queue)).toHaveLength(0);
  });

  it('lists tasks (BASIC and FULL view), deletes one, and reserves the deleted name until the tombstone expires', async () => {
    const queue = uniqueQueue('list');
    await client.createQueue({ parent: PARENT, queue: { name: queue } });
    await client.pauseQueue({ name: queue });
    for (const id of ['a', 'b', 'c']) {
      await client.createTask({
        parent: queue,
        task: { name: `${queue}/tasks/${id}`, httpRequest: { url: target.base, body: Buffer.from(id) } },
      });
    }
    const [basic] = await client.listTasks({ parent: queue });
    expect(basic.map((t) => t.name?.split('/').pop()).sort()).toEqual(['a', 'b', 'c']);
    expect(basic.every((t) => t.view === 'BASIC' && (t.httpRequest?.body?.length ?? 0) === 0)).toBe(true);
    // Manual paging, FULL view: the bodies come back.
    const [page1, next] = await client.listTasks(
      { parent: queue, responseView: 'FULL', pageSize: 2 },
      { autoPaginate: false },
    );
    expect(page1).toHaveLength(2);
    expect(next?.pageToken).toBeTruthy();
    const [page2, end] = await client.listTasks({ ...next, parent: queue }, { autoPaginate: false });
    expect(end).toBeNull();
    const bodies = [...page1, ...page2].map((t) => Buffer.from(t.httpRequest?.body ?? []).toString());
    expect(bodies.sort()).toEqual(['a', 'b', 'c']);

    const name = `${queue}/tasks/b`;
    await client.deleteTask({ name });
    expect(await codeOf(client.getTask({ name }))).toBe(NOT_FOUND);
    expect(await codeOf(client.deleteTask({ name }))).toBe(NOT_FOUND);
    expect((await client.listTasks({ parent: queue }))[0]).toHaveLength(2);
    expect(await codeOf(client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } }))).toBe(
      ALREADY_EXISTS,
    );

    // After tombstoneMs (300 ms here) the name is free again.
    await waitFor(async () => {
      try {
        await client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } });
        return true;
      } catch {
        return false;
      }
    }, 'the tombstone to expire');

    await client.purgeQueue({ name: queue });
    expect((await client.listTasks({ parent: queue }))[0]).toHaveLength(0);
  });

  it('validates task names and payloads', async () => {
    const queue = uniqueQueue('valid');
    await client.createQueue({ parent: PARENT, queue: { name: queue } });
    const create = (task: object): Promise<unknown> => client.createTask({ parent: queue, task });
    expect(await codeOf(create({ name: `${queue}/tasks/has.dot`, httpRequest: { url: target.base } }))).toBe(
      INVALID_ARGUMENT,
    );
    expect(await codeOf(create({ name: `${queue}/tasks/${'x'.repeat(501)}`, httpRequest: { url: target.base } }))).toBe(
      INVALID_ARGUMENT,
    );
    expect(
      await codeOf(create({ name: `${uniqueQueue()}/tasks/other-queue`, httpRequest: { url: target.base } })),
    ).toBe(INVALID_ARGUMENT);
    expect(await codeOf(create({ httpRequest: { url: 'ftp://example.com' } }))).toBe(INVALID_ARGUMENT);
    expect(await codeOf(create({ httpRequest: { url: target.base, httpMethod: 'GET', body: Buffer.from('x') } }))).toBe(
      INVALID_ARGUMENT,
    );
    expect(await codeOf(create({ httpRequest: { url: target.base }, dispatchDeadline: { seconds: 5 } }))).toBe(
      INVALID_ARGUMENT,
    );
    expect(await codeOf(create({ appEngineHttpRequest: { relativeUri: '/x' } }))).toBe(INVALID_ARGUMENT);
    expect(await codeOf(create({}))).toBe(INVALID_ARGUMENT);
    expect(await codeOf(create({ httpRequest: { url: target.base, headers: { 'X-Bad': 'line\nbreak' } } }))).toBe(
      INVALID_ARGUMENT,
    );
    const [ok] = await client.createTask({
      parent: queue,
      task: { name: `${queue}/tasks/${'x'.repeat(500)}`, httpRequest: { url: target.base } },
    });
    expect(ok.name).toBeDefined();
    await emulator.idle();
  });

  it('surfaces an injected CreateTask failure to the client and creates nothing', async () => {
    const queue = uniqueQueue('fault');
    await client.createQueue({ parent: PARENT, queue: { name: queue } });
    await client.pauseQueue({ name: queue });
    emulator.failNextCreateTask();
    const name = `${queue}/tasks/first`;
    expect(await codeOf(client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } }))).toBe(
      UNAVAILABLE,
    );
    expect(emulator.tasks(queue)).toHaveLength(0);
    // Only the next call failed; the same name is accepted afterwards.
    await client.createTask({ parent: queue, task: { name, httpRequest: { url: target.base } } });
    expect(emulator.tasks(queue).map((t) => t.name)).toEqual([name]);
    emulator.failNextCreateTask(1, 8);
    expect(await codeOf(client.createTask({ parent: queue, task: { httpRequest: { url: target.base } } }))).toBe(8); // RESOURCE_EXHAUSTED
  });
});

describe('dispatch deadline', () => {
  it('aborts an attempt that gets no answer within the deadline', async () => {
    const hanging = await startTarget(() => 'hang');
    try {
      const started = Date.now();
      const outcome = await sendHttp({ url: `${hanging.base}/slow`, method: 'POST', headers: {} }, 200);
      expect(outcome).toMatchObject({ kind: 'deadline' });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(hanging.received).toHaveLength(1);
    } finally {
      await hanging.close();
    }
  });
});
