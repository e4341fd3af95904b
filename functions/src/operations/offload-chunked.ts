import type { DocumentData } from '@google-cloud/firestore';
import { errorMessage } from '../core/errors';
import { inChunksWithoutOffload, type OffloadedPayload } from '../inbox/claim-check';
import type { PushEnvelope, ValidDraft } from '../inbox/draft';
import { writePayloadObject } from '../inbox/offload-payload';
import type { Logger } from '../log';
import { interpretMessage } from '../receiver/interpret';
import { rawBytes } from './raw-data';
import { RefusedError } from './refused';
import type { OperationsDeps } from './types';

/**
 * A readable document whose payload is in `rawChunks` and whose document
 * holds only its summary: a dead letter stored while the payload bucket
 * could not be written (receiveDeadLetter keeps it in Firestore then, since
 * nothing comes after it). Reopened as it is, it would hand its process the
 * summary without the line items.
 */
export function isChunkedPayload(doc: DocumentData | undefined): boolean {
  if (doc === undefined || doc.messageName === null || doc.payload === null || doc.payload === undefined) return false;
  return inChunksWithoutOffload(doc);
}

/**
 * The payload of such a document as the receiver would have read it: the
 * bytes read back from the chunks, interpreted again with the stored
 * attributes, checked against the stored payload hash. Reads only, so a
 * preview refuses what the real run would (a {@link RefusedError}).
 */
export async function chunkedDraft(
  deps: Pick<OperationsDeps, 'db' | 'config' | 'registry'>,
  id: string,
  doc: DocumentData,
): Promise<ValidDraft> {
  const bytes = await rawBytes(deps.db(), id, doc);
  if (bytes === null) throw new RefusedError(`${id}: its payload chunks are missing; nothing to offload`);
  const source = (doc.source ?? {}) as { messageId?: unknown; subscription?: unknown; attributes?: unknown };
  const attributes: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of Array.isArray(source.attributes)
    ? (source.attributes as Array<{ key?: unknown; value?: unknown }>)
    : []) {
    if (typeof pair.key === 'string' && typeof pair.value === 'string') attributes[pair.key] = pair.value;
  }
  const envelope: PushEnvelope = {
    messageId: typeof source.messageId === 'string' ? source.messageId : id,
    subscription: typeof source.subscription === 'string' ? source.subscription : null,
    data: bytes.toString('base64'),
    attributes,
    publishTime: null,
    orderingKey: null,
    deliveryAttempt: null,
  };
  const draft = interpretMessage(envelope, deps.registry(), { referenceBuckets: deps.config.claims.referenceBuckets });
  if (draft.kind !== 'valid' || draft.payloadHash !== doc.payloadHash) {
    throw new RefusedError(
      `${id}: its chunks no longer read as the payload it was stored with (${draft.kind === 'valid' ? 'another payload hash' : draft.error}); show it with \`inbox show ${id} --raw FILE\``,
    );
  }
  return draft;
}

/**
 * Before a requeue reopens such a document, offloads its payload as the
 * receiver would have ({@link chunkedDraft}), written to the payload bucket
 * (create-if-absent, so a re-run reuses the object). The requeue's
 * transaction then records the reference.
 */
export async function offloadChunked(
  deps: Pick<OperationsDeps, 'db' | 'config' | 'payloadStore' | 'registry'>,
  log: Logger,
  id: string,
  doc: DocumentData,
): Promise<OffloadedPayload> {
  const draft = await chunkedDraft(deps, id, doc);
  const claims = deps.config.claims;
  try {
    const written = await writePayloadObject(
      { store: deps.payloadStore, bucket: claims.payloadBucket, offloadBytes: claims.offloadBytes, log },
      draft,
      id,
    );
    return written.offloaded;
  } catch (err) {
    // Refused for this document only: a bulk requeue goes on with the others.
    throw new RefusedError(
      `${id}: its payload could not be offloaded to gs://${claims.payloadBucket} (${errorMessage(err)}); nothing changed, run the requeue again once that is fixed`,
    );
  }
}
