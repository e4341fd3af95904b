import { rejection, useHarness } from './helpers';

/**
 * The fault hooks, seen through the real client: which calls it retries on
 * its own (idempotent ones: reads, metadata, and writes with a generation
 * precondition) and which it does not. Counted faults make every case
 * deterministic: the n-th request fails, whatever the timing.
 */
const h = useHarness();
let n = 0;
const fresh = (): string => `faults-${process.pid}-${++n}`;

async function bucketWith(object: string, body: string): Promise<{ bucket: string; generation: string }> {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  const file = bucket.file(object);
  await file.save(body, { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } });
  return { bucket: bucket.name, generation: String(file.metadata.generation) };
}

test('failNext(1, 503) on a metadata read: the client retries by itself and succeeds', async () => {
  const { bucket, generation } = await bucketWith('o', 'x');
  h.emulator.faults.failNext(1, 503, (r) => r.bucket === bucket && r.op === 'stat');
  const [meta] = await h.client.bucket(bucket).file('o', { generation }).getMetadata();
  expect(String(meta.generation)).toBe(generation);
  const stats = h.emulator.requests().filter((r) => r.bucket === bucket && r.op === 'stat');
  expect(stats.map((r) => [r.status, r.injected])).toEqual([
    [503, true],
    [200, false],
  ]);
});

test('failNext(1, 503) on a create-if-absent upload: retried (the precondition makes it idempotent), created once', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  h.emulator.faults.failNext(1, 503, (r) => r.bucket === bucket.name && r.op === 'upload');
  await bucket.file('o').save('x', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } });
  const uploads = h.emulator.requests().filter((r) => r.bucket === bucket.name && r.op === 'upload');
  expect(uploads.map((r) => r.status)).toEqual([503, 200]);
  expect(h.emulator.objects(bucket.name).map((o) => o.name)).toEqual(['o']);
});

test('an upload without a precondition is not retried: the 503 reaches the caller and nothing is stored', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  h.emulator.faults.failNext(1, 503, (r) => r.bucket === bucket.name && r.op === 'upload');
  const err = await rejection(bucket.file('o').save('x', { resumable: false }));
  expect(err.code).toBe(503);
  expect(err.errors).toEqual([expect.objectContaining({ reason: 'backendError' })]);
  expect(h.emulator.objects(bucket.name)).toEqual([]);
});

test('a 403 is not retried, and a failed download changes nothing', async () => {
  const { bucket, generation } = await bucketWith('o', 'kept');
  h.emulator.faults.failNext(1, 403, (r) => r.bucket === bucket);
  const err = await rejection(h.client.bucket(bucket).file('o', { generation }).download());
  expect(err.code).toBe(403);
  expect(
    h.emulator
      .requests()
      .filter((r) => r.bucket === bucket && r.op === 'read')
      .map((r) => r.status),
  ).toEqual([403]);
  const [data] = await h.client.bucket(bucket).file('o', { generation }).download();
  expect(data.toString()).toBe('kept');
});

test('clear() drops pending faults; the request log shows what was fetched and what never was', async () => {
  const { bucket, generation } = await bucketWith('seen', 'x');
  await h.client.bucket(bucket).file('never', { generation: '1' }).exists();
  h.emulator.faults.failNext(5, 500);
  h.emulator.faults.clear();
  await h.client.bucket(bucket).file('seen', { generation }).download();
  const mine = h.emulator.requests().filter((r) => r.bucket === bucket);
  expect(mine.filter((r) => r.object === 'never').map((r) => r.op)).toEqual(['stat']);
  expect(mine.some((r) => r.object === 'never' && r.op === 'read')).toBe(false);
  expect(mine.filter((r) => r.object === 'seen').map((r) => [r.op, r.status])).toEqual([
    ['upload', 200],
    ['read', 200],
  ]);
});

test('slow(ms) holds matching requests; a client that times out gives up while the write still lands', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  const release = h.emulator.faults.slow(400, (r) => r.bucket === bucket.name && r.op === 'upload');
  const started = Date.now();
  await bucket.file('held').save('x', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } });
  expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  // The client's `timeout` that counts is the Storage constructor's: save()'s own option is overridden by it.
  const { Storage } = require('@google-cloud/storage') as typeof import('@google-cloud/storage');
  const impatient = new Storage({ projectId: 'conformance', timeout: 100 });
  const err = await rejection(
    impatient
      .bucket(bucket.name)
      .file('late')
      .save('y', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } }),
  );
  expect(err.message).toMatch(/network timeout/);
  // Not retried: file.save() retries answered failures only.
  expect(h.emulator.objects(bucket.name).some((o) => o.name === 'late')).toBe(false);
  // The held upload is carried out after the client left, as on the service.
  await waitFor(() => h.emulator.objects(bucket.name).some((o) => o.name === 'late'));
  release();
  expect(
    h.emulator
      .requests()
      .filter((r) => r.bucket === bucket.name && r.object === 'late')
      .map((r) => [r.op, r.status]),
  ).toEqual([['upload', 200]]);
});

/** Resolves once `check` holds (polled every 20 ms, at most 5 s). */
async function waitFor(check: () => boolean): Promise<void> {
  const until = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met within 5 s');
    await new Promise<void>((resolve) => setTimeout(resolve, 20));
  }
}
