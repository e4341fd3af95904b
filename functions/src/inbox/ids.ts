import { stableId } from '../core/hash';

/**
 * Deterministic inbox document ids. The same message always maps to the same
 * id, so storing it is a create() that a redelivery cannot repeat.
 */

/**
 * A valid message: one document per (message name, correlation key, dedup
 * key). The correlation key is part of the identity so that two orders (or
 * cases) whose sender reuses an event id are two events, never a KEY_COLLISION.
 */
export function messageDocId(messageName: string, correlationKey: string, dedupKey: string): string {
  return stableId('message', messageName, correlationKey, dedupKey);
}

/**
 * The id the receiver gave a valid message before the correlation key was
 * part of it. Documents (and processed records) stored under it keep that id;
 * the receiver checks it too before it creates a document (store-message.ts).
 */
export function legacyMessageDocId(messageName: string, dedupKey: string): string {
  return stableId('message', messageName, dedupKey);
}

/**
 * A message that could not be read. A messageId is unique only within its
 * topic; the push envelope names the subscription (one topic each), so the id
 * uses subscription + messageId.
 */
export function invalidDocId(subscription: string | null, messageId: string): string {
  return stableId('invalid', subscription ?? '', messageId);
}

/** The second, different payload under an existing dedup key: one document per (first id, payload). */
export function collisionDocId(firstId: string, payloadHash: string): string {
  return stableId('collision', firstId, payloadHash);
}

/**
 * Shard of a document, from its (already uniformly distributed) id. The relay's
 * candidate index leads with the shard so that the ever-growing time field is
 * spread over `shards` index ranges instead of one hot range.
 */
export function shardOf(docId: string, shards: number): number {
  return Number.parseInt(docId.slice(0, 8), 16) % shards;
}
