import type { Firestore } from '@google-cloud/firestore';
import { FieldValue } from '@google-cloud/firestore';
import { randomUUID } from 'node:crypto';
import { type GsObject, gsUri } from '../../functions/src/core/gs-uri';
import { canonicalJson } from '../../functions/src/core/hash';
import { correlationKeyDocId } from '../../functions/src/engine/ids';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { offloadObjectName, type OffloadedPayload, type ReferenceClaim } from '../../functions/src/inbox/claim-check';
import { INBOX, openDocument } from '../../functions/src/inbox/document';
import type { ValidDraft } from '../../functions/src/inbox/draft';
import { storeMessage } from '../../functions/src/inbox/store-message';
import { parsePushEnvelope } from '../../functions/src/receiver/envelope';
import { interpretMessage } from '../../functions/src/receiver/interpret';
import type { MessageRegistry } from '../../functions/src/receiver/registry';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { TEST_REGISTRY } from './inbox';

/**
 * Inbox documents with claim checks, built with the contract of issue 17
 * (the draft interpretMessage makes, openDocument, storeMessage), so these
 * tests need neither the receiver's reference parsing nor its offload path.
 * Objects go through the real PayloadStore (the storage emulator).
 */

/** The message type a completion is stored as: the registry that knows it and its name. */
export interface StoredAs {
  readonly registry: MessageRegistry;
  readonly name: string;
}

/** The fixture app's completion, TaskCompleted: what these helpers store unless told otherwise (an example app's tests pass their own). */
export const FIXTURE_COMPLETION: StoredAs = { registry: TEST_REGISTRY, name: 'TaskCompleted' };

/** A completion draft of `payload` (TaskCompleted unless `as` says), as the receiver interprets it. */
export function completionDraft(
  payload: Record<string, unknown>,
  referenceBuckets: readonly string[] = [],
  as: StoredAs = FIXTURE_COMPLETION,
): { draft: ValidDraft; envelope: ReturnType<typeof envelopeOf> } {
  const envelope = envelopeOf(payload, as.name);
  const draft = interpretMessage(envelope, as.registry, { referenceBuckets });
  if (draft.kind !== 'valid') throw new Error(`test message is invalid: ${draft.error}`);
  return { draft, envelope };
}

function envelopeOf(
  payload: Record<string, unknown>,
  name: string,
): import('../../functions/src/inbox/draft').PushEnvelope {
  const parsed = parsePushEnvelope({
    message: {
      data: Buffer.from(JSON.stringify(payload)).toString('base64'),
      attributes: { eventType: name },
      messageId: randomUUID(),
    },
    subscription: 'projects/test/subscriptions/inbox-push',
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.envelope;
}

/**
 * The claim a sender's reference field makes of `ref` (what the receiver
 * stores as `reference`): the field and the process variable are those the
 * message type's claim check declares (TaskCompleted's unless `as` says).
 */
export function reportReference(ref: GsObject, as: StoredAs = FIXTURE_COMPLETION): ReferenceClaim {
  const spec = as.registry.find((t) => t.name === as.name)?.claimCheck;
  if (spec?.field === undefined) throw new Error(`the message type ${as.name} declares no claim-check field`);
  return { ...ref, uri: gsUri(ref), carriedIn: 'field', name: spec.field, variable: spec.variable };
}

/** Stores a completion that carries `reference`, as the receiver does (document and lane entry). */
export async function storeReferenced(
  db: Firestore,
  payload: Record<string, unknown>,
  reference: ReferenceClaim,
  now = new Date(),
  as: StoredAs = FIXTURE_COMPLETION,
): Promise<string> {
  const { draft, envelope } = completionDraft(payload, [reference.bucket], as);
  const outcome = await storeMessage(db, { ...draft, reference }, { envelope, now, shards: 16, offload: null });
  if (outcome.kind !== 'STORED') throw new Error(`expected STORED, got ${outcome.kind}`);
  return outcome.id;
}

/**
 * Stores a completion whose payload is offloaded, in the receiver's order:
 * the object first (createIfAbsent, the canonical bytes), then the document
 * with the summary and the claim, with its lane entry, in one commit.
 */
export async function storeOffloaded(
  db: Firestore,
  store: PayloadStore,
  bucket: string,
  payload: Record<string, unknown>,
  now = new Date(),
  as: StoredAs = FIXTURE_COMPLETION,
): Promise<{ id: string; offloaded: OffloadedPayload; bytes: Buffer }> {
  const { draft, envelope } = completionDraft(payload, [], as);
  const bytes = Buffer.from(draft.canonicalPayload, 'utf8');
  const object = offloadObjectName(draft.id, draft.payloadHash);
  const { generation } = await store.createIfAbsent(bucket, object, bytes, 'application/json');
  const offloaded: OffloadedPayload = {
    bucket,
    object,
    generation,
    uri: gsUri({ bucket, object, generation }),
    bytes: bytes.length,
    variable: draft.offloadVariable,
  };
  const doc = openDocument(draft, { envelope, now, shards: 16 }, offloaded);
  const entry = {
    inboxId: draft.id,
    messageName: draft.messageName,
    publishTime: doc.source.publishTime,
    receivedAt: doc.receivedAt,
  };
  const batch = db.batch();
  batch.create(db.collection(INBOX).doc(draft.id), doc);
  batch.set(
    db.collection(COLLECTIONS.correlationKeys).doc(correlationKeyDocId(draft.correlationKey)),
    { correlationKey: draft.correlationKey, open: FieldValue.arrayUnion(entry), updatedAt: now },
    { merge: true },
  );
  await batch.commit();
  return { id: draft.id, offloaded, bytes };
}

/** `count` line items; `describe` chars of description each make a payload as large as needed. */
export function lineItems(
  count: number,
  describe = 0,
): Array<{ itemId: string; quantity: number; description?: string }> {
  return Array.from({ length: count }, (_, i) => ({
    itemId: `ITEM-${i}`,
    quantity: 1 + (i % 3),
    ...(describe > 0 ? { description: 'x'.repeat(describe) } : {}),
  }));
}

/** Uploads a sender's completion report to `bucket/object` through the real store: the reference to it. */
export async function uploadReport(
  store: PayloadStore,
  bucket: string,
  object: string,
  report: unknown,
): Promise<GsObject> {
  const { generation } = await store.createIfAbsent(
    bucket,
    object,
    Buffer.from(JSON.stringify(report)),
    'application/json',
  );
  return { bucket, object, generation };
}

/** Builders of claim-check payloads: completions with a given number of bytes of line items. */

/** Characters of each filler item's description: small enough that the last item can take up any remainder (at most MAX_LINE_ITEM_TEXT_CHARS). */
const FILLER_DESCRIPTION_CHARS = 500;

/**
 * A TaskCompleted payload whose canonical JSON (what the receiver
 * measures against INBOX_OFFLOAD_BYTES, and the offloaded object's bytes) is
 * exactly `bytes` long, made of line items; its JSON.stringify has the same
 * length (ASCII, no whitespace). At least ~1 KiB.
 */
export function completionOfBytes(
  caseId: string,
  bytes: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const head = { caseId, completedItems: 0, completionTimestamp: '2026-11-29T10:00:00Z', ...extra };
  const item = (i: number, description: string): Record<string, unknown> => ({
    itemId: `item-${String(i).padStart(6, '0')}`,
    quantity: 1,
    description,
  });
  const size = (lineItems: ReadonlyArray<Record<string, unknown>>): number =>
    Buffer.byteLength(canonicalJson({ ...head, completedItems: lineItems.length, lineItems }), 'utf8');
  const full = size([item(0, 'x'.repeat(FILLER_DESCRIPTION_CHARS))]) - size([]);
  const count = Math.max(0, Math.floor((bytes - size([]) - 200) / (full + 1)));
  const items = Array.from({ length: count }, (_, i) => item(i, 'x'.repeat(FILLER_DESCRIPTION_CHARS)));
  // The last item's description takes up the remainder; completedItems counts it (its digits are part of the size).
  const last = (description: string): Array<Record<string, unknown>> => [...items, item(count, description)];
  const remainder = bytes - size(last(''));
  if (remainder < 0 || remainder > 1_024)
    throw new Error(`completionOfBytes(${bytes}): remainder ${remainder} out of range`);
  const lineItems = last('y'.repeat(remainder));
  const payload = { ...head, completedItems: lineItems.length, lineItems };
  const got = Buffer.byteLength(canonicalJson(payload), 'utf8');
  if (got !== bytes) throw new Error(`completionOfBytes(${bytes}) made ${got} bytes`);
  return payload;
}
