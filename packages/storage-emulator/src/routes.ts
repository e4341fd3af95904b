import { fail, type ApiFailure } from './api-error';
import type { RequestInfo, RequestOp } from './faults';
import { hashesOf } from './hashes';
import { parseMultipart } from './multipart';
import { bucketResource, mediaHeaders, objectResource } from './resources';
import { int64, type Preconditions, type Store, type StoredObject } from './store';

/** One HTTP request, read in full. */
export interface Incoming {
  readonly method: string;
  /** Path and query as sent. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/** What to send back. */
export interface Outgoing {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** A request matched to an operation, before anything is done (faults and the log see this). */
export interface Routed extends RequestInfo {
  readonly run: (store: Store, base: string) => Outgoing;
}

const JSON_TYPE = 'application/json; charset=UTF-8';
const MAX_PAGE = 1000;

export function json(status: number, value: unknown): Outgoing {
  return { status, headers: { 'content-type': JSON_TYPE }, body: Buffer.from(JSON.stringify(value)) };
}

export function failure(err: ApiFailure): Outgoing {
  return json(err.status, err.body());
}

/**
 * Matches a request to a JSON API operation. The client sends JSON calls to
 * `STORAGE_EMULATOR_HOST` + `/b/...` (the variable replaces the whole base
 * URL, `/storage/v1` included), uploads to `/upload/storage/v1/b/.../o`; the
 * `/storage/v1/b/...` and `/download/storage/v1/b/...` forms of the real
 * endpoint are taken too.
 */
export function route(req: Incoming): Routed {
  const url = new URL(req.url, 'http://emulator');
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const raw = url.pathname;
  const upload = raw.startsWith('/upload/storage/v1/');
  const rest = upload ? raw.slice('/upload/storage/v1'.length) : raw.replace(/^\/(download\/)?storage\/v1(?=\/)/, '');
  const m = /^\/b(?:\/([^/]+)(?:\/o(?:\/(.+))?)?)?\/?$/.exec(rest);
  const base = { method: req.method, path: raw, query };
  const unknown = (): Routed => ({
    ...base,
    bucket: null,
    object: null,
    op: 'unknown',
    run: () => failure(fail.notFoundPath(req.method, raw)),
  });
  if (m === null) return unknown();
  const [, rawBucket, rawObject] = m;
  const hasO = /^\/b\/[^/]+\/o(\/|$)/.test(rest);
  const bucket = rawBucket === undefined ? null : decode(rawBucket);
  const object = rawObject === undefined ? null : decode(rawObject);
  const op = opOf(req.method, upload, bucket, hasO, object, query);
  if (op === 'unknown' || bucket === undefined || object === undefined) return unknown();
  const info = { ...base, bucket, object: op === 'upload' ? (query.name ?? null) : object, op };
  return { ...info, run: (store, origin) => run(store, origin, info, req) };
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function opOf(
  method: string,
  upload: boolean,
  bucket: string | null | undefined,
  hasO: boolean,
  object: string | null | undefined,
  query: Record<string, string>,
): RequestOp {
  if (upload) return method === 'POST' && hasO && object === null ? 'upload' : 'unknown';
  if (bucket === null) return method === 'POST' ? 'bucket.create' : method === 'GET' ? 'bucket.list' : 'unknown';
  if (!hasO) return method === 'GET' ? 'bucket.get' : method === 'DELETE' ? 'bucket.delete' : 'unknown';
  if (object === null) return method === 'GET' ? 'list' : method === 'POST' ? 'upload' : 'unknown';
  if (method === 'GET') return query.alt === 'media' ? 'read' : 'stat';
  return method === 'DELETE' ? 'delete' : 'unknown';
}

function run(store: Store, origin: string, info: RequestInfo, req: Incoming): Outgoing {
  const { query } = info;
  const bucket = info.bucket ?? '';
  unsupported(query);
  switch (info.op) {
    case 'bucket.create': {
      const body = parseJson(req.body);
      const name = typeof body.name === 'string' ? body.name : '';
      if (name === '') throw fail.required('Required: bucket name.');
      return json(200, bucketResource(origin, store.createBucket(name, query.project ?? '')));
    }
    case 'bucket.get':
      return json(200, bucketResource(origin, store.bucket(bucket)));
    case 'bucket.list': {
      const items = store.allBuckets().filter((b) => query.project === undefined || b.project === query.project);
      return json(200, {
        kind: 'storage#buckets',
        ...(items.length === 0 ? {} : { items: items.map((b) => bucketResource(origin, b)) }),
      });
    }
    case 'bucket.delete':
      store.deleteBucket(bucket);
      return { status: 204, headers: {}, body: Buffer.alloc(0) };
    case 'upload':
      return json(200, objectResource(origin, upload(store, bucket, query, req)));
    case 'read': {
      if (req.headers.range !== undefined) throw fail.notImplemented('A ranged download (Range header)');
      const o = store.get(bucket, info.object ?? '', generationOf(query));
      return { status: 200, headers: mediaHeaders(o), body: o.data };
    }
    case 'stat':
      return json(200, objectResource(origin, store.get(bucket, info.object ?? '', generationOf(query))));
    case 'delete':
      store.delete(bucket, info.object ?? '', generationOf(query), preconditions(query));
      return { status: 204, headers: {}, body: Buffer.alloc(0) };
    case 'list': {
      const max = query.maxResults === undefined ? MAX_PAGE : Number(query.maxResults);
      if (!Number.isInteger(max) || max < 1)
        throw fail.invalid(`Invalid argument: maxResults=${query.maxResults ?? ''}`);
      const page = store.list(bucket, query.prefix ?? '', query.pageToken, Math.min(max, MAX_PAGE));
      return json(200, {
        kind: 'storage#objects',
        ...(page.items.length === 0 ? {} : { items: page.items.map((o) => objectResource(origin, o)) }),
        ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }),
      });
    }
    case 'unknown':
      throw fail.notFoundPath(info.method, info.path);
  }
}

/** Query parameters that change the meaning of a call and that this emulator does not honour: 501, never silently ignored. */
const UNSUPPORTED = [
  'ifMetagenerationMatch',
  'ifMetagenerationNotMatch',
  'ifSourceGenerationMatch',
  'delimiter',
  'versions',
  'startOffset',
  'endOffset',
  'matchGlob',
  'kmsKeyName',
  'predefinedAcl',
];

function unsupported(query: Record<string, string>): void {
  const hit = UNSUPPORTED.find((k) => query[k] !== undefined);
  if (hit !== undefined) throw fail.notImplemented(`The parameter ${hit}`);
}

function upload(store: Store, bucket: string, query: Record<string, string>, req: Incoming): StoredObject {
  const header = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const pre = preconditions(query);
  const type = query.uploadType;
  if (type === 'media')
    return store.put(
      bucket,
      query.name ?? '',
      req.body,
      header('content-type') ?? 'application/octet-stream',
      undefined,
      pre,
    );
  if (type === 'resumable') throw fail.notImplemented('uploadType=resumable (pass resumable: false to the client)');
  if (type === 'multipart') {
    const parts = parseMultipart(header('content-type'), req.body);
    const name = typeof parts.metadata.name === 'string' ? parts.metadata.name : (query.name ?? '');
    if (query.name !== undefined && typeof parts.metadata.name === 'string' && parts.metadata.name !== query.name) {
      throw fail.invalid('The object name in the metadata differs from the name parameter.');
    }
    const contentType =
      typeof parts.metadata.contentType === 'string'
        ? parts.metadata.contentType
        : (parts.contentType ?? 'application/octet-stream');
    checkSentHashes(parts.metadata, parts.data);
    return store.put(bucket, name, parts.data, contentType, customOf(parts.metadata.metadata), pre);
  }
  throw fail.invalid('Upload requests must include an uploadType URL parameter (media or multipart).');
}

/** The API refuses an upload whose declared checksum differs from the bytes received. */
function checkSentHashes(metadata: Readonly<Record<string, unknown>>, data: Buffer): void {
  const actual = hashesOf(data);
  if (typeof metadata.crc32c === 'string' && metadata.crc32c !== actual.crc32c) {
    throw fail.invalid(`Provided CRC32C "${metadata.crc32c}" doesn't match calculated CRC32C "${actual.crc32c}".`);
  }
  if (typeof metadata.md5Hash === 'string' && metadata.md5Hash !== actual.md5Hash) {
    throw fail.invalid(
      `Provided MD5 hash "${metadata.md5Hash}" doesn't match calculated MD5 hash "${actual.md5Hash}".`,
    );
  }
}

function customOf(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

function generationOf(query: Record<string, string>): bigint | undefined {
  return query.generation === undefined ? undefined : int64('generation', query.generation);
}

function preconditions(query: Record<string, string>): Preconditions {
  return {
    ...(query.ifGenerationMatch === undefined
      ? {}
      : { ifGenerationMatch: int64('ifGenerationMatch', query.ifGenerationMatch) }),
    ...(query.ifGenerationNotMatch === undefined
      ? {}
      : { ifGenerationNotMatch: int64('ifGenerationNotMatch', query.ifGenerationNotMatch) }),
  };
}

function parseJson(body: Buffer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body.toString('utf8') || '{}');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw fail.invalid('The request body is not a JSON object.');
}
