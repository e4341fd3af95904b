/**
 * Which stored message a new one is, decided from what exists under its ids.
 * Pure: the receiver and receiveDeadLetter read the inbox document under the
 * message's id and under the id the same message had before the correlation
 * key was part of it, and this says what the message is.
 */

/** A stored message under one id, as read: an inbox document (`payloadHash`, `correlationKey`). */
export type StoredEntry = Readonly<Record<string, unknown>>;

/** The places, as read (undefined: nothing there). */
export interface Found {
  readonly doc: StoredEntry | undefined;
  readonly legacyDoc: StoredEntry | undefined;
}

export interface Identity {
  readonly id: string;
  readonly legacyId: string;
  readonly correlationKey: string;
  readonly payloadHash: string;
}

export type Verdict =
  /** The same message is stored under `id`: nothing to do. */
  | { readonly kind: 'DUPLICATE'; readonly id: string }
  /** Another payload holds the identity under `firstId`. */
  | { readonly kind: 'COLLISION'; readonly firstId: string }
  /**
   * Only an old-scheme entry of another correlation key: the event id was
   * reused for another work order, which the new scheme keeps apart. Store
   * the message without checking the old id.
   */
  | { readonly kind: 'OTHER_KEY_UNDER_LEGACY_ID' }
  /** Nothing under any id. */
  | { readonly kind: 'NOTHING' };

export function dedupVerdict(message: Identity, found: Found): Verdict {
  const own = found.doc;
  if (own !== undefined) return own.payloadHash === message.payloadHash ? { kind: 'DUPLICATE', id: message.id } : { kind: 'COLLISION', firstId: message.id };
  const legacy = found.legacyDoc;
  if (legacy === undefined) return { kind: 'NOTHING' };
  if (legacy.correlationKey !== message.correlationKey) return { kind: 'OTHER_KEY_UNDER_LEGACY_ID' };
  return legacy.payloadHash === message.payloadHash ? { kind: 'DUPLICATE', id: message.legacyId } : { kind: 'COLLISION', firstId: message.legacyId };
}
