import { classifyFailure, HttpApiError } from '../../functions/src/core/errors';
import type { GsObject } from '../../functions/src/core/gs-uri';
import { createGcsPayloadStore, type StoragePolicy } from '../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { useTestStorage } from '../support/storage';
import { waitFor } from '../support/wait';

/**
 * The real adapter on the real @google-cloud/storage client, against
 * packages/storage-emulator. Short backoffs keep the retry cases fast; the
 * deployed policy is STORAGE_POLICY.
 */
const BUCKET = 'inbox-payloads-test';
const storage = useTestStorage([BUCKET]);
const FAST: StoragePolicy = {
  requestTimeoutMs: 500,
  maxRetries: 1,
  retryDelayMultiplier: 1,
  maxRetryDelaySeconds: 1,
  totalTimeoutSeconds: 5,
  uploadBytesPerSecond: 4 * 1024 * 1024,
};
let store: PayloadStore;
let n = 0;
const name = (): string => `payloads/t${++n}/${'a'.repeat(8)}.json`;

beforeAll(() => {
  store = createGcsPayloadStore('storage-test', FAST);
});
afterEach(() => {
  storage.current.emulator.faults.clear();
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

test('createIfAbsent creates once; the second call finds the first generation and keeps its bytes', async () => {
  const object = name();
  const first = await store.createIfAbsent(BUCKET, object, Buffer.from('{"a":1}'), 'application/json');
  expect(first.created).toBe(true);
  expect(first.generation).toMatch(/^\d+$/);
  const second = await store.createIfAbsent(BUCKET, object, Buffer.from('{"a":1}'), 'application/json');
  expect(second).toEqual({ generation: first.generation, created: false });
  // Other bytes under the name (a corrupted upload, a foreign write): refused, never pointed at.
  const other = await failure(store.createIfAbsent(BUCKET, object, Buffer.from('{"b":2}'), 'application/json'));
  expect(String(other)).toMatch(/exists with other bytes/);
  const read = await store.read({ bucket: BUCKET, object, generation: first.generation });
  expect(read).toEqual({ kind: 'FOUND', data: Buffer.from('{"a":1}') });
  const upload = storage.current.emulator.requests().filter((r) => r.op === 'upload' && r.object === object);
  expect(upload.map((r) => [r.query.ifGenerationMatch, r.query.uploadType, r.status])).toEqual([
    ['0', 'multipart', 200],
    ['0', 'multipart', 412],
    ['0', 'multipart', 412],
  ]);
});

test('read and stat are pinned to the generation: CHANGED after an overwrite, MISSING after a delete', async () => {
  const object = name();
  const { generation } = await store.createIfAbsent(BUCKET, object, Buffer.from('old'), 'text/plain');
  const ref: GsObject = { bucket: BUCKET, object, generation };
  expect(await store.stat(ref)).toEqual({ kind: 'FOUND', bytes: 3 });
  // A sender replaces its object: the same name, a new generation.
  await storage.current.client.bucket(BUCKET).file(object).save('newer content', { resumable: false });
  const [live] = await storage.current.client.bucket(BUCKET).file(object).getMetadata();
  expect(await store.read(ref)).toEqual({ kind: 'CHANGED', liveGeneration: String(live.generation) });
  expect(await store.stat(ref)).toEqual({ kind: 'CHANGED', liveGeneration: String(live.generation) });
  await storage.current.client.bucket(BUCKET).file(object).delete();
  expect(await store.read(ref)).toEqual({ kind: 'MISSING' });
  expect(await store.stat(ref)).toEqual({ kind: 'MISSING' });
});

test('delete removes that generation; a repeated delete is ABSENT; another generation is not deleted', async () => {
  const object = name();
  const { generation } = await store.createIfAbsent(BUCKET, object, Buffer.from('x'), 'text/plain');
  expect(await store.delete({ bucket: BUCKET, object, generation: String(BigInt(generation) + 1n) })).toBe('ABSENT');
  expect(storage.current.emulator.objects(BUCKET).some((o) => o.name === object)).toBe(true);
  expect(await store.delete({ bucket: BUCKET, object, generation })).toBe('DELETED');
  expect(await store.delete({ bucket: BUCKET, object, generation })).toBe('ABSENT');
  expect(storage.current.emulator.objects(BUCKET).some((o) => o.name === object)).toBe(false);
});

test('list pages through the objects under a prefix in name order', async () => {
  const prefix = `payloads/list${++n}/`;
  const names = ['c', 'a', 'e', 'b', 'd'].map((s) => `${prefix}${s}.json`);
  for (const o of names) await store.createIfAbsent(BUCKET, o, Buffer.from(o), 'application/json');
  await store.createIfAbsent(BUCKET, `payloads/other${n}/z.json`, Buffer.from('z'), 'application/json');
  const seen: string[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const page = await store.list(BUCKET, prefix, token, 2);
    pages += 1;
    for (const o of page.objects) {
      expect(o.generation).toMatch(/^\d+$/);
      expect(o.bytes).toBe(Buffer.byteLength(o.object));
      // The age the orphan repair goes by: the resource's timeCreated.
      const [meta] = await storage.current.client.bucket(BUCKET).file(o.object).getMetadata();
      expect(o.created).toEqual(new Date(String(meta.timeCreated)));
    }
    seen.push(...page.objects.map((o) => o.object));
    token = page.nextPageToken;
  } while (token !== null);
  expect(seen).toEqual([...names].sort());
  expect(pages).toBe(3);
});

test('a 503 is retried by the client and the create succeeds', async () => {
  const object = name();
  storage.current.emulator.faults.failNext(1, 503, (r) => r.op === 'upload' && r.object === object);
  const made = await store.createIfAbsent(BUCKET, object, Buffer.from('retried'), 'application/json');
  expect(made.created).toBe(true);
  const uploads = storage.current.emulator.requests().filter((r) => r.op === 'upload' && r.object === object);
  expect(uploads.map((r) => r.status)).toEqual([503, 200]);
});

test('an upload that timed out but landed fails retryably (the client does not retry a timeout); the redelivery finds it', async () => {
  const object = name();
  const release = storage.current.emulator.faults.slow(800, (r) => r.op === 'upload' && r.object === object);
  const err = await failure(store.createIfAbsent(BUCKET, object, Buffer.from('slow'), 'application/json'));
  expect(classifyFailure(err)).toEqual({ kind: 'retryable', code: 'UNAVAILABLE' });
  // The emulator, like the service, carries the upload out although the client gave up.
  const landed = await waitFor('the slow upload to land', async () =>
    storage.current.emulator.objects(BUCKET).find((o) => o.name === object),
  );
  release();
  expect(await store.createIfAbsent(BUCKET, object, Buffer.from('slow'), 'application/json')).toEqual({
    generation: landed.generation,
    created: false,
  });
  const uploads = storage.current.emulator.requests().filter((r) => r.op === 'upload' && r.object === object);
  expect(uploads.map((r) => r.status)).toEqual([200, 412]);
});

test.each([
  [503, 'retryable', 'HTTP_503'],
  [429, 'retryable', 'HTTP_429'],
  [500, 'retryable', 'HTTP_500'],
  [403, 'unexpected', 'HTTP_403'],
] as const)('a lasting %i is a technical failure naming the object and the status (%s)', async (status, kind, code) => {
  const object = name();
  storage.current.emulator.faults.failNext(10, status, (r) => r.object === object);
  const err = await failure(store.createIfAbsent(BUCKET, object, Buffer.from('x'), 'application/json'));
  expect(err).toBeInstanceOf(HttpApiError);
  expect((err as HttpApiError).message).toContain(`gs://${BUCKET}/${object}`);
  expect((err as HttpApiError).message).toContain(`HTTP ${status}`);
  expect(classifyFailure(err)).toEqual({ kind, code });
  const read = await failure(store.read({ bucket: BUCKET, object, generation: '1' }));
  expect(classifyFailure(read)).toEqual({ kind, code });
  expect(storage.current.emulator.objects(BUCKET).some((o) => o.name === object)).toBe(false);
});

test('no answer within the timeout is a retryable failure', async () => {
  const object = name();
  storage.current.emulator.faults.slow(2_000, (r) => r.object === object);
  const err = await failure(store.stat({ bucket: BUCKET, object, generation: '1' }));
  expect(classifyFailure(err)).toEqual({ kind: 'retryable', code: 'UNAVAILABLE' });
  expect((err as Error).message).toContain(`gs://${BUCKET}/${object}#1`);
});

test('a missing bucket is a technical failure on every call, never MISSING or ABSENT', async () => {
  const bucket = 'no-such-bucket-here';
  const ref: GsObject = { bucket, object: name(), generation: '1' };
  const calls: Array<[string, Promise<unknown>]> = [
    ['create', store.createIfAbsent(bucket, ref.object, Buffer.from('x'), 'application/json')],
    ['read', store.read(ref)],
    ['stat', store.stat(ref)],
    ['delete', store.delete(ref)],
    ['list', store.list(bucket, 'payloads/', null, 10)],
  ];
  for (const [call, promise] of calls) {
    const err = await failure(promise);
    expect([call, err]).toEqual([call, expect.any(HttpApiError)]);
    expect([call, classifyFailure(err)]).toEqual([call, { kind: 'unexpected', code: 'HTTP_404' }]);
    expect((err as Error).message).toContain('(the bucket does not exist)');
  }
});

test('an object 404 is MISSING/ABSENT only once a listing confirms the bucket: a failing listing makes it technical', async () => {
  const object = name();
  const ref: GsObject = { bucket: BUCKET, object, generation: '1' };
  storage.current.emulator.faults.failNext(2, 403, (r) => r.op === 'list' && r.query.prefix === object);
  expect(classifyFailure(await failure(store.stat(ref)))).toEqual({ kind: 'unexpected', code: 'HTTP_403' });
  expect(classifyFailure(await failure(store.delete(ref)))).toEqual({ kind: 'unexpected', code: 'HTTP_403' });
  // Listing answered: the same calls are answers again.
  expect(await store.stat(ref)).toEqual({ kind: 'MISSING' });
  expect(await store.delete(ref)).toBe('ABSENT');
});
