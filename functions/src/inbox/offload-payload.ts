import { errorMessage } from '../core/errors';
import { gsUri, type GsObject } from '../core/gs-uri';
import type { Logger } from '../log';
import type { PayloadStore } from '../storage/payload-store';
import { offloadObjectName, type OffloadedPayload } from './claim-check';
import type { ValidDraft } from './draft';

/**
 * The receiver's side of an offloaded payload: the object is written before
 * the document that points at it, so a document's existence means its
 * object exists. Nothing here deletes: an object no document ends up
 * pointing at (a replay after its document was purged) is left to
 * `inbox repair orphan-payloads`. See docs/data-model.md, "Offloaded payloads".
 */

/** What storeMessage needs to offload a payload over the threshold. */
export interface OffloadSettings {
  /** The store, created on first use: a receiver that never offloads never loads @google-cloud/storage. */
  readonly store: () => PayloadStore;
  /** INBOX_PAYLOAD_BUCKET. */
  readonly bucket: string;
  /** INBOX_OFFLOAD_BYTES: a canonical payload of more bytes is offloaded. */
  readonly offloadBytes: number;
  /** Where a fallback is reported (WARNING): receiveDeadLetter keeps a payload in rawChunks when the bucket cannot be written. */
  readonly log: Logger;
}

/** An object written for a document, and whether this call created it. */
export interface WrittenObject {
  readonly offloaded: OffloadedPayload;
  readonly created: boolean;
}

/** gRPC UNAVAILABLE: what classifyFailure (core/errors.ts) answers 503. */
const UNAVAILABLE = 14;

/** True when the canonical payload is over the threshold and goes to the bucket. */
export function mustOffload(draft: ValidDraft, settings: OffloadSettings | null): settings is OffloadSettings {
  return settings !== null && Buffer.byteLength(draft.canonicalPayload, 'utf8') > settings.offloadBytes;
}

/**
 * A storage failure as the receiver answers it: retryable (503, Pub/Sub
 * redelivers). The client reports HTTP statuses as numeric codes, which the
 * gRPC-based classification would take for defects (500); the cause stays
 * attached. A programming error (TypeError and the like) stays what it is.
 */
function asUnavailable(err: unknown, what: string): unknown {
  if (
    err instanceof TypeError ||
    err instanceof RangeError ||
    err instanceof ReferenceError ||
    err instanceof SyntaxError
  )
    return err;
  return Object.assign(new Error(`payload store: ${what} failed: ${errorMessage(err)}`, { cause: err }), {
    code: UNAVAILABLE,
  });
}

/**
 * Writes the payload as `payloads/<inboxId>/<payloadHash>.json` unless it
 * exists (a redelivery finds its own object: the name is deterministic, so
 * the bytes are the same). Throws (retryable) when the store fails.
 */
export async function writePayloadObject(
  settings: OffloadSettings,
  draft: ValidDraft,
  inboxId: string,
): Promise<WrittenObject> {
  const object = offloadObjectName(inboxId, draft.payloadHash);
  const bytes = Buffer.from(draft.canonicalPayload, 'utf8');
  let result: { readonly generation: string; readonly created: boolean };
  try {
    result = await settings.store().createIfAbsent(settings.bucket, object, bytes, 'application/json');
  } catch (err) {
    throw asUnavailable(err, `writing gs://${settings.bucket}/${object}`);
  }
  const ref: GsObject = { bucket: settings.bucket, object, generation: result.generation };
  return {
    offloaded: { ...ref, uri: gsUri(ref), bytes: bytes.length, variable: draft.offloadVariable },
    created: result.created,
  };
}
