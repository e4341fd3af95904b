/**
 * Which stored message a new one is, decided from what exists under its ids.
 * Pure: the receiver and receiveDeadLetter read the four places (the inbox
 * document and the processed record, under the message's id and under the id
 * the same message had before the correlation key was part of it) and this
 * says what the message is.
 */

/** What is kept of a stored message under one id, as read: an inbox document or a processed record (both have `payloadHash` and `correlationKey`). */
export type StoredEntry = Readonly<Record<string, unknown>>;

/** The four places, as read (undefined: nothing there). */
export interface Found {
  readonly doc: StoredEntry | undefined;
  readonly record: StoredEntry | undefined;
  readonly legacyDoc: StoredEntry | undefined;
  readonly legacyRecord: StoredEntry | undefined;
}

export interface Identity {
  readonly id: string;
  readonly legacyId: string;
  readonly correlationKey: string;
  readonly payloadHash: string;
}

export type Verdict =
  /** The same message is stored (or was processed) under `id`: nothing to do. */
  | { readonly kind: 'DUPLICATE'; readonly id: string; readonly documentExists: boolean }
  /** Another payload holds the identity under `firstId` (its document, or only its record once that expired). */
  | { readonly kind: 'COLLISION'; readonly firstId: string }
  /**
   * Only an old-scheme entry of another correlation key: the event id was
   * reused for another business key, which the new scheme keeps apart. Store
   * the message without checking the old id.
   */
  | { readonly kind: 'OTHER_KEY_UNDER_LEGACY_ID' }
  /** Nothing under any id. */
  | { readonly kind: 'NOTHING' };

export function dedupVerdict(message: Identity, found: Found): Verdict {
  const own = found.doc ?? found.record;
  if (own !== undefined)
    return own.payloadHash === message.payloadHash
      ? { kind: 'DUPLICATE', id: message.id, documentExists: found.doc !== undefined }
      : { kind: 'COLLISION', firstId: message.id };
  const legacy = found.legacyDoc ?? found.legacyRecord;
  if (legacy === undefined) return { kind: 'NOTHING' };
  if (legacy.correlationKey !== message.correlationKey) return { kind: 'OTHER_KEY_UNDER_LEGACY_ID' };
  return legacy.payloadHash === message.payloadHash
    ? { kind: 'DUPLICATE', id: message.legacyId, documentExists: found.legacyDoc !== undefined }
    : { kind: 'COLLISION', firstId: message.legacyId };
}
