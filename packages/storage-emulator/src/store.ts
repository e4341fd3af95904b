import { ApiFailure, fail } from './api-error';
import { hashesOf, type ObjectHashes } from './hashes';

/** One live object. Buckets are not versioned: an overwrite replaces the generation. */
export interface StoredObject {
  readonly bucket: string;
  readonly name: string;
  readonly generation: bigint;
  readonly contentType: string;
  readonly data: Buffer;
  readonly hashes: ObjectHashes;
  readonly created: Date;
  /** The resource's `metadata` (custom key/value pairs) as uploaded. */
  readonly custom: Readonly<Record<string, string>> | undefined;
}

export interface StoredBucket {
  readonly name: string;
  readonly project: string;
  readonly created: Date;
  readonly objects: Map<string, StoredObject>;
}

/** `ifGenerationMatch` / `ifGenerationNotMatch` of a request, parsed. */
export interface Preconditions {
  readonly ifGenerationMatch?: bigint;
  readonly ifGenerationNotMatch?: bigint;
}

/** One page of a listing. */
export interface ListPage {
  readonly items: readonly StoredObject[];
  readonly nextPageToken: string | undefined;
}

/** The API's bucket naming rules (the dotted, domain-like form aside). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]$/;

/** Parses an int64 decimal parameter (a generation); 400 like the API for anything else. */
export function int64(name: string, value: string): bigint {
  if (!/^-?\d{1,19}$/.test(value)) throw fail.invalid(`Invalid argument: ${name}=${value} is not an int64.`);
  return BigInt(value);
}

/**
 * The emulator's state: buckets and their live objects, in memory.
 * Generations come from one clock for all buckets: microseconds since the
 * epoch like Cloud Storage's, strictly increasing even within a microsecond.
 */
export class Store {
  private readonly buckets = new Map<string, StoredBucket>();
  private lastGeneration = 0n;

  createBucket(name: string, project: string): StoredBucket {
    if (!BUCKET_NAME.test(name) || name.includes('..')) throw fail.invalid(`Invalid bucket name: '${name}'`);
    if (this.buckets.has(name)) throw fail.bucketExists();
    const bucket: StoredBucket = { name, project, created: new Date(), objects: new Map() };
    this.buckets.set(name, bucket);
    return bucket;
  }

  bucket(name: string): StoredBucket {
    const bucket = this.buckets.get(name);
    if (bucket === undefined) throw fail.noBucket();
    return bucket;
  }

  allBuckets(): StoredBucket[] {
    return [...this.buckets.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  deleteBucket(name: string): void {
    const bucket = this.bucket(name);
    if (bucket.objects.size > 0) throw new ApiFailure(409, 'conflict', 'The bucket you tried to delete is not empty.');
    this.buckets.delete(name);
  }

  /** Writes `name` (a new generation) if the preconditions hold against the live object. */
  put(
    bucketName: string,
    name: string,
    data: Buffer,
    contentType: string,
    custom: Record<string, string> | undefined,
    pre: Preconditions,
  ): StoredObject {
    const bucket = this.bucket(bucketName);
    checkName(name);
    check(bucket.objects.get(name), pre);
    const object: StoredObject = {
      bucket: bucketName,
      name,
      generation: this.nextGeneration(),
      contentType,
      data,
      hashes: hashesOf(data),
      created: new Date(),
      custom,
    };
    bucket.objects.set(name, object);
    return object;
  }

  /** The live object, or exactly `generation` of it: 404 "No such object" otherwise. */
  get(bucketName: string, name: string, generation: bigint | undefined): StoredObject {
    const object = this.bucket(bucketName).objects.get(name);
    if (object === undefined || (generation !== undefined && object.generation !== generation))
      throw fail.noObject(bucketName, name);
    return object;
  }

  delete(bucketName: string, name: string, generation: bigint | undefined, pre: Preconditions): void {
    const bucket = this.bucket(bucketName);
    const object = this.get(bucketName, name, generation);
    check(object, pre);
    bucket.objects.delete(name);
  }

  /**
   * Live objects whose names start with `prefix`, in name order (byte order
   * of the UTF-8 names, as the API sorts), from after the page token's name.
   */
  list(bucketName: string, prefix: string, pageToken: string | undefined, maxResults: number): ListPage {
    const bucket = this.bucket(bucketName);
    const after = pageToken === undefined ? undefined : decodeToken(pageToken);
    const names = [...bucket.objects.keys()]
      .filter((n) => n.startsWith(prefix) && (after === undefined || compareNames(n, after) > 0))
      .sort(compareNames);
    const page = names.slice(0, maxResults);
    const last = page[page.length - 1];
    const items = page.map((n) => bucket.objects.get(n)).filter((o): o is StoredObject => o !== undefined);
    return {
      items,
      nextPageToken:
        names.length > maxResults && last !== undefined ? Buffer.from(last, 'utf8').toString('base64url') : undefined,
    };
  }

  private nextGeneration(): bigint {
    const now = BigInt(Date.now()) * 1000n;
    this.lastGeneration = now > this.lastGeneration ? now : this.lastGeneration + 1n;
    return this.lastGeneration;
  }
}

function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function decodeToken(token: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw fail.invalid(`Invalid pageToken: ${token}`);
  return Buffer.from(token, 'base64url').toString('utf8');
}

/** The API's object naming rules: 1..1024 bytes of UTF-8, no CR or LF. */
function checkName(name: string): void {
  if (name === '') throw fail.required('Required: object name.');
  if (Buffer.byteLength(name, 'utf8') > 1024 || /[\r\n]/.test(name))
    throw fail.invalid(`Invalid object name: '${name}'`);
}

/** 412 conditionNotMet when a generation precondition fails (0 = the object must not exist). */
function check(live: StoredObject | undefined, pre: Preconditions): void {
  const generation = live?.generation ?? 0n;
  if (pre.ifGenerationMatch !== undefined && pre.ifGenerationMatch !== generation) throw fail.precondition();
  if (pre.ifGenerationNotMatch !== undefined && pre.ifGenerationNotMatch === generation) throw fail.precondition();
}
