import { createHash } from 'node:crypto';
import { CRC32C } from '@google-cloud/storage';
import { rejection, useHarness } from './helpers';

/**
 * Conformance: every call goes through the real @google-cloud/storage client
 * (through STORAGE_EMULATOR_HOST), with the options our adapter uses, and the
 * answers are checked against what the JSON API documents.
 */
const h = useHarness();
/** The client's own CRC32C, the one its validators use. */
const crc32cOf = (data: Buffer): string => {
  const crc = new CRC32C();
  crc.update(data);
  return crc.toString();
};
let n = 0;
const fresh = (): string => `bucket-${process.pid}-${++n}`;
const SAVE = { resumable: false, contentType: 'application/json' } as const;
const IF_ABSENT = { ...SAVE, preconditionOpts: { ifGenerationMatch: 0 } } as const;

test('buckets: create, get, a second create is 409, a write to a missing bucket is 404', async () => {
  const name = fresh();
  const [bucket] = await h.client.createBucket(name);
  expect(bucket.name).toBe(name);
  const [meta] = await h.client.bucket(name).getMetadata();
  expect(meta).toMatchObject({ kind: 'storage#bucket', name });
  expect((await rejection(h.client.createBucket(name))).code).toBe(409);
  expect(h.emulator.requests().find((r) => r.op === 'bucket.create')?.query.project).toBe('conformance');
  const missing = await rejection(h.client.bucket(fresh()).file('o').save('x', IF_ABSENT));
  expect(missing).toMatchObject({ code: 404, message: 'The specified bucket does not exist.' });
});

test('a missing bucket is 404 "The specified bucket does not exist." on reads, stats, deletes, lists and uploads; a missing object is "No such object"', async () => {
  const name = fresh();
  const file = h.client.bucket(name).file('o.json', { generation: '1' });
  const calls: Array<[string, Promise<unknown>]> = [
    ['read', file.download()],
    ['stat', file.getMetadata()],
    ['delete', file.delete({ ifGenerationMatch: '1' })],
    ['list', h.client.bucket(name).getFiles({ prefix: 'p/', maxResults: 1, autoPaginate: false })],
    ['upload', h.client.bucket(name).file('o.json').save('x', IF_ABSENT)],
  ];
  for (const [op, call] of calls) {
    const err = await rejection(call);
    // A media download's error carries the whole JSON body as its message; the JSON calls carry the API's message.
    expect([op, err.code, err.message]).toEqual([
      op,
      404,
      expect.stringContaining('The specified bucket does not exist.'),
    ]);
  }
  expect(
    h.emulator
      .requests()
      .filter((r) => r.bucket === name)
      .map((r) => [r.op, r.status]),
  ).toEqual(calls.map(([op]) => [op, 404]));
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  const missing = await rejection(bucket.file('o.json', { generation: '1' }).getMetadata());
  expect(missing).toMatchObject({ code: 404, message: `No such object: ${bucket.name}/o.json` });
  expect(missing.message).not.toContain('does not exist');
});

test('create-if-absent twice: the second is 412 conditionNotMet and the first generation stays', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  const file = bucket.file('payloads/id/hash.json');
  await file.save('{"first":true}', IF_ABSENT);
  const first = String(file.metadata.generation);
  expect(first).toMatch(/^[1-9]\d{15,}$/);
  const err = await rejection(bucket.file('payloads/id/hash.json').save('{"second":true}', IF_ABSENT));
  expect(err.code).toBe(412);
  expect(err.errors).toEqual([expect.objectContaining({ reason: 'conditionNotMet' })]);
  const [meta] = await bucket.file('payloads/id/hash.json').getMetadata();
  expect(String(meta.generation)).toBe(first);
  const [data] = await bucket.file('payloads/id/hash.json', { generation: first }).download();
  expect(data.toString()).toBe('{"first":true}');
});

test('metadata: size, md5Hash, crc32c (the client verified them on upload), content type, generations as decimal strings', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  const body = Buffer.from(JSON.stringify({ lineItems: Array.from({ length: 500 }, (_, i) => ({ sku: `s${i}` })) }));
  const file = bucket.file('report.json');
  // validation: 'crc32c' (also the default) makes the client compare its own crc32c with the answer's and delete on mismatch.
  await file.save(body, { ...IF_ABSENT, validation: 'crc32c' });
  const [meta] = await bucket.file('report.json', { generation: String(file.metadata.generation) }).getMetadata();
  expect(meta).toMatchObject({
    kind: 'storage#object',
    name: 'report.json',
    bucket: bucket.name,
    generation: String(file.metadata.generation),
    metageneration: '1',
    contentType: 'application/json',
    size: String(body.length),
    md5Hash: createHash('md5').update(body).digest('base64'),
    crc32c: crc32cOf(body),
  });
  // md5 validation too: the client refuses an upload whose answer lacks or differs in md5Hash.
  const other = bucket.file('report-md5.json');
  await other.save(body, { ...IF_ABSENT, validation: 'md5' });
  expect(other.metadata.md5Hash).toBe(meta.md5Hash);
});

test('download validation (crc32c by default, md5 on request) passes on what the emulator serves', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  const body = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
  const file = bucket.file('binary.bin');
  await file.save(body, { ...IF_ABSENT, contentType: 'application/octet-stream' });
  const generation = String(file.metadata.generation);
  for (const validation of [true, 'crc32c', 'md5'] as const) {
    const [data] = await bucket.file('binary.bin', { generation }).download({ validation });
    expect(data.equals(body)).toBe(true);
  }
  const read = h.emulator.requests().filter((r) => r.op === 'read' && r.bucket === bucket.name);
  expect(read.map((r) => [r.query.alt, r.query.generation])).toEqual(
    Array.from({ length: 3 }, () => ['media', generation]),
  );
});

test('read by generation: after an overwrite the old generation is 404 "No such object", the new one reads', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  await bucket.file('o.json').save('old', SAVE);
  const [oldMeta] = await bucket.file('o.json').getMetadata();
  await bucket.file('o.json').save('new', SAVE);
  const [newMeta] = await bucket.file('o.json').getMetadata();
  expect(BigInt(String(newMeta.generation))).toBeGreaterThan(BigInt(String(oldMeta.generation)));
  const old = bucket.file('o.json', { generation: String(oldMeta.generation) });
  expect((await rejection(old.download())).code).toBe(404);
  expect(await rejection(old.getMetadata())).toMatchObject({
    code: 404,
    message: `No such object: ${bucket.name}/o.json`,
  });
  const [data] = await bucket.file('o.json', { generation: String(newMeta.generation) }).download();
  expect(data.toString()).toBe('new');
});

test('delete: by generation, with ifGenerationMatch (412 on another), 404 once gone', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  const file = bucket.file('d.json');
  await file.save('x', IF_ABSENT);
  const generation = String(file.metadata.generation);
  const mismatch = await rejection(
    bucket.file('d.json').delete({ ifGenerationMatch: String(BigInt(generation) + 1n) }),
  );
  expect(mismatch.code).toBe(412);
  expect((await rejection(bucket.file('d.json', { generation: '1' }).delete())).code).toBe(404);
  await bucket.file('d.json', { generation }).delete({ ifGenerationMatch: generation });
  expect(await bucket.file('d.json').exists()).toEqual([false]);
  expect(await rejection(bucket.file('d.json', { generation }).delete())).toMatchObject({
    code: 404,
    message: `No such object: ${bucket.name}/d.json`,
  });
  const deletes = h.emulator.requests().filter((r) => r.op === 'delete' && r.bucket === bucket.name);
  expect(deletes.at(-2)?.query).toMatchObject({ generation, ifGenerationMatch: generation });
});

test('list: prefix, maxResults pages in name order, nextPageToken until the last page', async () => {
  const bucket = h.client.bucket(fresh());
  await bucket.create();
  const names = ['p/b', 'p/a', 'p/c/d', 'p/c', 'q/z', 'p/é', 'p/B'];
  for (const name of names) await bucket.file(name).save(name, IF_ABSENT);
  const pages: string[][] = [];
  let query: { pageToken?: string } | null = {};
  while (query !== null) {
    const [files, next]: [Array<{ name: string }>, { pageToken?: string } | null, unknown] = (await bucket.getFiles({
      prefix: 'p/',
      maxResults: 2,
      autoPaginate: false,
      ...query,
    })) as never;
    pages.push(files.map((f) => f.name));
    query = typeof next?.pageToken === 'string' ? { pageToken: next.pageToken } : null;
  }
  // Byte order of the UTF-8 names, as the API sorts: upper case before lower, é (0xC3 0xA9) last.
  expect(pages).toEqual([
    ['p/B', 'p/a'],
    ['p/b', 'p/c'],
    ['p/c/d', 'p/é'],
  ]);
  const [all] = await bucket.getFiles({ prefix: 'p/' });
  expect(all.map((f) => f.name)).toEqual(pages.flat());
  expect(
    all.every(
      (f) => /^\d+$/.test(String(f.metadata.generation)) && f.metadata.size === String(Buffer.byteLength(f.name)),
    ),
  ).toBe(true);
  const [none] = await bucket.getFiles({ prefix: 'nothing/' });
  expect(none).toEqual([]);
});
