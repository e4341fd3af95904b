/**
 * Cloud Storage object references pinned to one generation: the form a claim
 * check travels in (`gs://bucket/object#generation`, the versioned-URL form of
 * gsutil and gcloud storage). Pure: parsing and formatting only.
 */

/** One object of one bucket at one generation: content that cannot change under its reader. */
export interface GsObject {
  readonly bucket: string;
  /** Object name (UTF-8, 1 to 1024 bytes, no CR or LF, not `.` or `..`). */
  readonly object: string;
  /** The generation as a decimal string (an int64: beyond a JS number's exact range). */
  readonly generation: string;
}

export type ParsedGsUri =
  { readonly ok: true; readonly value: GsObject } | { readonly ok: false; readonly error: string };

/** Longest reference text accepted: `gs://` + 222 (bucket) + `/` + 1024 (object) + `#` + 19 (generation). */
export const MAX_GS_URI_CHARS = 1_280;

const BUCKET = /^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/;
const GENERATION = /^[1-9][0-9]{0,18}$/;

/** Why a bucket name breaks Cloud Storage's naming rules, or null. */
export function bucketNameProblem(bucket: string): string | null {
  if (!BUCKET.test(bucket))
    return 'a bucket name is 3 to 222 lowercase letters, digits, dots, dashes or underscores, starting and ending with a letter or digit';
  if (!bucket.includes('.') && bucket.length > 63) return 'a bucket name without dots has at most 63 characters';
  if (bucket.split('.').some((part) => part.length === 0 || part.length > 63))
    return 'each dot-separated part of a bucket name has 1 to 63 characters';
  if (/^\d+\.\d+\.\d+\.\d+$/.test(bucket)) return 'a bucket name is not an IP address';
  if (bucket.startsWith('goog')) return 'a bucket name does not start with "goog"';
  return null;
}

/** Why an object name breaks Cloud Storage's naming rules, or null. */
export function objectNameProblem(object: string): string | null {
  const bytes = Buffer.byteLength(object, 'utf8');
  if (bytes < 1 || bytes > 1024) return 'an object name has 1 to 1024 bytes of UTF-8';
  if (/[\r\n]/.test(object)) return 'an object name has no carriage return or line feed';
  if (object === '.' || object === '..') return 'an object name is not "." or ".."';
  return null;
}

/**
 * Reads `gs://bucket/object#generation`. The generation is required: without
 * it the sender could replace the content after the message was acked, and
 * the inbox would bill what it never received. Total: any text gives a value
 * or a reason a sender can act on.
 */
export function parseGsUri(text: string): ParsedGsUri {
  const fail = (error: string): ParsedGsUri => ({ ok: false, error });
  if (text.length > MAX_GS_URI_CHARS) return fail(`a reference has at most ${MAX_GS_URI_CHARS} characters`);
  if (!text.startsWith('gs://')) return fail('a reference has the form gs://bucket/object#generation');
  const rest = text.slice('gs://'.length);
  const slash = rest.indexOf('/');
  const hash = rest.lastIndexOf('#');
  if (slash <= 0) return fail('a reference names a bucket and an object: gs://bucket/object#generation');
  if (hash < slash)
    return fail(
      'a reference pins the object generation: gs://bucket/object#generation (the generation of the upload, which its metadata shows)',
    );
  const bucket = rest.slice(0, slash);
  const object = rest.slice(slash + 1, hash);
  const generation = rest.slice(hash + 1);
  const problem = bucketNameProblem(bucket) ?? objectNameProblem(object);
  if (problem !== null) return fail(problem);
  if (!GENERATION.test(generation)) return fail('a generation is a positive decimal integer');
  return { ok: true, value: { bucket, object, generation } };
}

/** The canonical text of a reference; parseGsUri(gsUri(x)) gives x back. */
export function gsUri(ref: GsObject): string {
  return `gs://${ref.bucket}/${ref.object}#${ref.generation}`;
}
