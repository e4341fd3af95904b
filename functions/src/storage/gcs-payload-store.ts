import type * as StorageModule from '@google-cloud/storage';
import { createHash } from 'node:crypto';
import { errorCode, errorMessage, HttpApiError } from '../core/errors';
import type { GsObject } from '../core/gs-uri';
import type { ObjectPage, PayloadStore, ReadResult, StatResult, Unavailable } from './payload-store';

/**
 * How long one storage call may take and how the client retries it. The
 * receiver offloads before it acks, within its write deadline
 * (INBOX_WRITE_TIMEOUT_MS, 8 s), so the worst case of one call must stay
 * under that. Each HTTP request gives up after `requestTimeoutMs`; the
 * client retries 408, 429 and 5xx answers (and reset connections) at most
 * `maxRetries` times, backing off about 1 s then 2 s
 * (`retryDelayMultiplier`, capped by `maxRetryDelaySeconds`), and starts no
 * retry once `totalTimeoutSeconds` have passed. An upload gets more time
 * the larger it is: `requestTimeoutMs` plus its bytes at
 * `uploadBytesPerSecond` ({@link uploadTimeoutMs}), so a 10 MiB report on a
 * busy instance is not cut off by the deadline a 2 KiB one needs. What the
 * client does not retry: an upload that timed out (file.save() retries only
 * answered failures), so a slow create fails after one timeout and the
 * redelivery finds the object if it landed. JSON calls (stat, read, delete,
 * list) also retry a request without an answer. Worst cases: a create of
 * 10 MiB, 5xx, 1 s, 5xx, 2 s, then a 4.5 s timeout, about 7.5 s; a JSON
 * call, the 5 s total plus one last timeout. What still fails is the
 * caller's to retry (Pub/Sub redelivers, the relay backs off).
 */
export interface StoragePolicy {
  readonly requestTimeoutMs: number;
  readonly maxRetries: number;
  readonly retryDelayMultiplier: number;
  readonly maxRetryDelaySeconds: number;
  readonly totalTimeoutSeconds: number;
  /** The slowest upload rate that is still healthy: an upload's timeout grows by its bytes at this rate. */
  readonly uploadBytesPerSecond: number;
}

/** The deployed policy (see {@link StoragePolicy}). */
export const STORAGE_POLICY: StoragePolicy = {
  requestTimeoutMs: 2_000,
  maxRetries: 2,
  retryDelayMultiplier: 2,
  maxRetryDelaySeconds: 2,
  totalTimeoutSeconds: 5,
  uploadBytesPerSecond: 4 * 1024 * 1024,
};

/** How long one upload of `bytes` may take before the client gives up (see {@link StoragePolicy}). */
export const uploadTimeoutMs = (policy: StoragePolicy, bytes: number): number =>
  policy.requestTimeoutMs + Math.ceil((bytes * 1000) / policy.uploadBytesPerSecond);

const PRECONDITION_FAILED = 412;
const NOT_FOUND = 404;

/** One client per process and setting, created on first use (keeps the library out of cold starts). */
let shared: { key: string; storage: StorageModule.Storage } | undefined;

function storageFor(projectId: string, policy: StoragePolicy): StorageModule.Storage {
  // The client reads STORAGE_EMULATOR_HOST itself when it is constructed; a test that changes it gets a new client.
  const key = JSON.stringify([projectId, policy, process.env.STORAGE_EMULATOR_HOST ?? null]);
  if (shared?.key === key) return shared.storage;
  const { Storage } = require('@google-cloud/storage') as typeof StorageModule;
  const storage = new Storage({
    projectId,
    timeout: policy.requestTimeoutMs,
    retryOptions: {
      autoRetry: true,
      maxRetries: policy.maxRetries,
      retryDelayMultiplier: policy.retryDelayMultiplier,
      maxRetryDelay: policy.maxRetryDelaySeconds,
      totalTimeout: policy.totalTimeoutSeconds,
    },
  });
  shared = { key, storage };
  return storage;
}

/** The HTTP status a storage client error carries, or null when there was no answer (timeout, connection). */
function statusOf(err: unknown): number | null {
  const code = errorCode(err);
  return typeof code === 'number' && code >= 100 && code <= 599 ? code : null;
}

/**
 * Whether a 404 is about the bucket, not the object. The JSON API answers
 * both with 404 `notFound`; only the message tells them apart: "The
 * specified bucket does not exist." for a bucket, "No such object: b/o" for
 * an object. The client puts the API's message in `message` and `errors[]`
 * of JSON calls, but the whole JSON body in `message` of a media download,
 * so both are searched. A bucket that is gone is a deployment fault (a
 * deleted or mistyped bucket), never the sender's missing object.
 */
function bucketMissing(err: unknown): boolean {
  if (statusOf(err) !== NOT_FOUND) return false;
  const errors = (err as { errors?: unknown }).errors;
  const detailed = Array.isArray(errors)
    ? errors.map((e: unknown) =>
        typeof e === 'object' && e !== null ? (e as { message?: unknown }).message : undefined,
      )
    : [];
  return [errorMessage(err), ...detailed].some((t) => typeof t === 'string' && BUCKET_MISSING.test(t));
}

const BUCKET_MISSING = /The specified bucket does not exist/i;

/** A 404 that means the object (or that generation) is not there, in a bucket that is. */
const objectMissing = (err: unknown): boolean => statusOf(err) === NOT_FOUND && !bucketMissing(err);

/**
 * Any failure of a call as an {@link HttpApiError} naming the object and the
 * status, so the project's classification sees it as technical: retryable
 * for 408/429/5xx and for no answer at all, unexpected (a deployment
 * problem, e.g. 403) otherwise. Never a business answer.
 */
function technical(what: string, ref: string, err: unknown): HttpApiError {
  const status = statusOf(err);
  const code = errorCode(err);
  const detail =
    status === null
      ? `no HTTP answer${code === undefined ? '' : ` (${code})`}`
      : `HTTP ${status}${bucketMissing(err) ? ' (the bucket does not exist)' : ''}`;
  return new HttpApiError(`Cloud Storage ${what} ${ref} failed: ${detail}: ${errorMessage(err)}`, status, {
    cause: err,
  });
}

/**
 * A listed object's `timeCreated` (RFC 3339, always in the resource). One
 * without a readable time is taken as created now: callers that act on age
 * (the orphan repair) then leave it alone rather than guess it old.
 */
function createdOf(time: unknown): Date {
  const ms = typeof time === 'string' ? Date.parse(time) : Number.NaN;
  return Number.isNaN(ms) ? new Date() : new Date(ms);
}

const uri = (bucket: string, object: string, generation?: string): string =>
  `gs://${bucket}/${object}${generation === undefined ? '' : `#${generation}`}`;

/**
 * The PayloadStore of `@google-cloud/storage` (loaded on first use). Locally
 * the client itself reads STORAGE_EMULATOR_HOST and talks to
 * packages/storage-emulator.
 */
export function createGcsPayloadStore(projectId: string, policy: StoragePolicy = STORAGE_POLICY): PayloadStore {
  const storage = (): StorageModule.Storage => storageFor(projectId, policy);

  /**
   * Throws unless `bucket` exists. The message of an object call's 404 is
   * not part of the API's contract, and a report has an object delete in a
   * missing bucket answered "No such object"; a listing of a missing bucket
   * is answered "The specified bucket does not exist." (and any failure of
   * it is technical), so an answer that would call an object gone is
   * confirmed with one (the listing needs only storage.objects.list, which
   * every identity that reads or deletes objects has). Taken only on the
   * rare MISSING and ABSENT answers.
   */
  const confirmBucket = async (bucket: string, object: string): Promise<void> => {
    try {
      await storage().bucket(bucket).getFiles({ prefix: object, maxResults: 1, autoPaginate: false });
    } catch (err) {
      throw technical('list (to confirm the bucket) of', uri(bucket, object), err);
    }
  };

  /** What the name holds now, when a pinned generation was not found. */
  const unavailable = async (bucket: string, object: string): Promise<Unavailable> => {
    try {
      const [live] = await storage().bucket(bucket).file(object).getMetadata();
      return { kind: 'CHANGED', liveGeneration: String(live.generation) };
    } catch (err) {
      if (!objectMissing(err)) throw technical('stat of the live object', uri(bucket, object), err);
    }
    await confirmBucket(bucket, object);
    return { kind: 'MISSING' };
  };

  return {
    async createIfAbsent(bucket, object, data, contentType) {
      const file = storage().bucket(bucket).file(object);
      try {
        // ifGenerationMatch=0: created only if absent, which also makes the upload safe for the client to retry.
        // MD5 (Node's native crypto), not the client's CRC32C byte loop in JavaScript: a sixth of the receiver's CPU on
        // an 8 MiB payload (docs/performance.md). Downloads keep CRC32C: a composite object has no MD5.
        await file.save(data, {
          resumable: false,
          preconditionOpts: { ifGenerationMatch: 0 },
          contentType,
          validation: 'md5',
          timeout: uploadTimeoutMs(policy, data.length),
        });
        return { generation: String(file.metadata.generation), created: true };
      } catch (err) {
        // 412 also follows our own earlier attempt that landed but whose answer was lost (the client retried it).
        if (statusOf(err) !== PRECONDITION_FAILED) throw technical('create of', uri(bucket, object), err);
      }
      let existing: { generation?: unknown; md5Hash?: unknown; size?: unknown };
      try {
        [existing] = await file.getMetadata();
      } catch (err) {
        // 404 here: deleted between the two calls. Retrying the whole call heals it, so it stays technical.
        throw technical('stat of the existing', uri(bucket, object), err);
      }
      // The name is deterministic (inbox id + payload hash), so the object there holds these bytes, unless an upload
      // was corrupted or someone else wrote it: never point a document at other bytes. The receiver answers 503; the
      // message is redelivered, then dead-lettered and kept in chunks until an operator removes the object.
      const md5 = createHash('md5').update(data).digest('base64');
      if ((typeof existing.md5Hash === 'string' && existing.md5Hash !== md5) || Number(existing.size) !== data.length) {
        throw new HttpApiError(
          `Cloud Storage object ${uri(bucket, object)} exists with other bytes (size ${String(existing.size)}, md5 ${String(existing.md5Hash)}; expected ${data.length}, ${md5}): delete it (\`gcloud storage rm\`) and let the message be redelivered or requeued`,
          null,
        );
      }
      return { generation: String(existing.generation), created: false };
    },

    async read(ref): Promise<ReadResult> {
      try {
        const [data] = await storage()
          .bucket(ref.bucket)
          .file(ref.object, { generation: ref.generation })
          .download({ validation: 'crc32c' });
        return { kind: 'FOUND', data };
      } catch (err) {
        if (objectMissing(err)) return unavailable(ref.bucket, ref.object);
        throw technical('read of', uri(ref.bucket, ref.object, ref.generation), err);
      }
    },

    async stat(ref): Promise<StatResult> {
      try {
        const [meta] = await storage()
          .bucket(ref.bucket)
          .file(ref.object, { generation: ref.generation })
          .getMetadata();
        return { kind: 'FOUND', bytes: Number(meta.size ?? 0) };
      } catch (err) {
        if (objectMissing(err)) return unavailable(ref.bucket, ref.object);
        throw technical('stat of', uri(ref.bucket, ref.object, ref.generation), err);
      }
    },

    async delete(ref: GsObject) {
      try {
        // With the generation as a precondition the client counts the delete as idempotent and retries it; without
        // one it switches retries off on the shared client for the call's duration, for every concurrent call too.
        await storage()
          .bucket(ref.bucket)
          .file(ref.object, { generation: ref.generation })
          .delete({ ifGenerationMatch: ref.generation });
        return 'DELETED';
      } catch (err) {
        if (!objectMissing(err)) throw technical('delete of', uri(ref.bucket, ref.object, ref.generation), err);
      }
      await confirmBucket(ref.bucket, ref.object);
      return 'ABSENT';
    },

    async list(bucket, prefix, pageToken, pageSize): Promise<ObjectPage> {
      try {
        const [files, next] = await storage()
          .bucket(bucket)
          .getFiles({
            prefix,
            maxResults: pageSize,
            autoPaginate: false,
            ...(pageToken === null ? {} : { pageToken }),
          });
        const token = (next as { pageToken?: unknown } | null | undefined)?.pageToken;
        return {
          objects: files.map((f) => ({
            object: f.name,
            generation: String(f.metadata.generation),
            bytes: Number(f.metadata.size ?? 0),
            created: createdOf(f.metadata.timeCreated),
          })),
          nextPageToken: typeof token === 'string' && token !== '' ? token : null,
        };
      } catch (err) {
        throw technical('list of', `gs://${bucket}/${prefix}*`, err);
      }
    },
  };
}
