import { z } from 'zod';
import type { PushEnvelope } from '../inbox/draft';

/**
 * The body Pub/Sub POSTs to a push endpoint. Pub/Sub's JSON mapping writes
 * camelCase (`messageId`, `publishTime`) and, for compatibility, snake_case
 * duplicates (`message_id`, `publish_time`); both are accepted.
 *
 * Emulator quirks: the Pub/Sub emulator may leave out `publishTime`,
 * `orderingKey` and `deliveryAttempt`, so all three are optional.
 */
const Timestamp = z.string().min(1).max(64);
const Id = z.string().min(1).max(1024);

const MessageSchema = z.object({
  data: z.string().optional(),
  // Checked by readAttributes(): zod's record drops a "__proto__" key.
  attributes: z.unknown().optional(),
  messageId: Id.optional(),
  message_id: Id.optional(),
  publishTime: Timestamp.optional(),
  publish_time: Timestamp.optional(),
  orderingKey: z.string().max(1024).optional(),
  ordering_key: z.string().max(1024).optional(),
});

const EnvelopeSchema = z.object({
  message: MessageSchema,
  subscription: z.string().max(1024).optional(),
  deliveryAttempt: z.number().int().nonnegative().nullish(),
});

export type EnvelopeResult =
  { readonly ok: true; readonly envelope: PushEnvelope } | { readonly ok: false; readonly error: string };

/** Firestore Timestamps span years 1 to 9999; a Date outside makes every write throw. */
const TIMESTAMP_MIN_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z
const TIMESTAMP_MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

function parseTime(text: string | undefined): Date | null {
  if (text === undefined) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) || ms < TIMESTAMP_MIN_MS || ms > TIMESTAMP_MAX_MS ? null : new Date(ms);
}

/**
 * Twice what Pub/Sub allows (100 attributes, 256-byte keys, 1 KiB values), so
 * no real push is refused, while a stored document stays far below 1 MiB.
 * Counted in UTF-8 bytes (what Firestore counts), plus a per-attribute
 * allowance for the stored `{key, value}` pair.
 */
export const MAX_ATTRIBUTE_BYTES = 256 * 1024;
/** Stored size of one attribute pair besides its key and value (field names and terminators). */
const ATTRIBUTE_OVERHEAD_BYTES = 16;
/** Twice Pub/Sub's 256 bytes; also below Firestore's 1,500-byte limit on a map key (dead-letter source attributes). */
export const MAX_ATTRIBUTE_KEY_BYTES = 512;

/**
 * True if the text holds an unpaired UTF-16 surrogate (JSON can escape one,
 * "\ud800"; UTF-8 cannot carry it, so Pub/Sub never sends it). Firestore's
 * client encodes a short such string as invalid UTF-8 and the write fails,
 * on every redelivery; a longer one is silently stored altered (U+FFFD).
 */
export function hasLoneSurrogate(text: string): boolean {
  return /\p{Cs}/u.test(text);
}

/**
 * Attributes into a null-prototype object: every own key of the parsed JSON,
 * `__proto__` and `constructor` included, stays plain data.
 */
function readAttributes(
  value: unknown,
): { ok: true; attributes: Record<string, string> } | { ok: false; error: string } {
  const attributes = Object.create(null) as Record<string, string>;
  if (value === null || value === undefined) return { ok: true, attributes };
  if (typeof value !== 'object' || Array.isArray(value))
    return { ok: false, error: 'message.attributes is not an object' };
  let size = 0;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    const name = JSON.stringify(key.slice(0, 64));
    if (typeof item !== 'string') return { ok: false, error: `message.attributes[${name}] is not a string` };
    if (Buffer.byteLength(key) > MAX_ATTRIBUTE_KEY_BYTES)
      return { ok: false, error: `message.attributes key ${name}… exceeds ${MAX_ATTRIBUTE_KEY_BYTES} bytes` };
    if (hasLoneSurrogate(key) || hasLoneSurrogate(item))
      return { ok: false, error: `message.attributes[${name}] is not valid Unicode (lone surrogate)` };
    size += Buffer.byteLength(key) + Buffer.byteLength(item) + ATTRIBUTE_OVERHEAD_BYTES;
    attributes[key] = item;
  }
  if (size > MAX_ATTRIBUTE_BYTES) return { ok: false, error: `message.attributes exceed ${MAX_ATTRIBUTE_BYTES} bytes` };
  return { ok: true, attributes };
}

/**
 * Accepts a request body only if it is a Pub/Sub push envelope: an object with
 * `message.messageId` (or `message_id`). Everything about the payload itself is
 * judged later, so a bad payload is stored and parked rather than refused here.
 */
export function parsePushEnvelope(body: unknown): EnvelopeResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    return { ok: false, error: 'body is not a JSON object (expected a Pub/Sub push envelope)' };
  }
  const parsed = EnvelopeSchema.safeParse(body);
  if (!parsed.success) {
    return { ok: false, error: `not a Pub/Sub push envelope: ${z.prettifyError(parsed.error)}` };
  }
  const { message, subscription, deliveryAttempt } = parsed.data;
  const messageId = message.messageId ?? message.message_id;
  if (messageId === undefined) {
    return { ok: false, error: 'not a Pub/Sub push envelope: message.messageId is missing' };
  }
  const texts: ReadonlyArray<[string, string | undefined]> = [
    ['message.messageId', messageId],
    ['subscription', subscription],
    ['message.orderingKey', message.orderingKey ?? message.ordering_key],
  ];
  const unpaired = texts.find(([, text]) => text !== undefined && hasLoneSurrogate(text));
  if (unpaired !== undefined)
    return { ok: false, error: `not a Pub/Sub push envelope: ${unpaired[0]} is not valid Unicode (lone surrogate)` };
  const attributes = readAttributes(message.attributes);
  if (!attributes.ok) return { ok: false, error: `not a Pub/Sub push envelope: ${attributes.error}` };
  return {
    ok: true,
    envelope: {
      messageId,
      subscription: subscription ?? null,
      data: message.data ?? '',
      attributes: attributes.attributes,
      publishTime: parseTime(message.publishTime ?? message.publish_time),
      orderingKey: message.orderingKey ?? message.ordering_key ?? null,
      deliveryAttempt: deliveryAttempt ?? null,
    },
  };
}

// A plain character-class run: linear on 14 MB of text, no backtracking.
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict base64 decoding (Buffer.from is lenient and would accept garbage). */
export function decodeBase64(text: string): Buffer | null {
  return text.length % 4 === 0 && BASE64_CHARS.test(text) ? Buffer.from(text, 'base64') : null;
}
