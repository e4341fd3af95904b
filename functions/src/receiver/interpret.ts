import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../core/hash';
import { invalidDocId, legacyMessageDocId, messageDocId } from '../inbox/ids';
import type { InboxDraft, InvalidDraft, PushEnvelope } from '../inbox/draft';
import { decodeBase64, hasLoneSurrogate } from './envelope';
import { DEFAULT_NAME_ATTRIBUTE, findMessageType, type MessageRegistry } from './registry';
import { errorMessage } from '../core/errors';
import { DEFAULT_OFFLOAD_VARIABLE } from '../inbox/claim-check';

/** Longest validation message kept on a document. */
const MAX_ERROR_CHARS = 2_000;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function clip(text: string): string {
  return text.length <= MAX_ERROR_CHARS ? text : `${text.slice(0, MAX_ERROR_CHARS)}… (truncated)`;
}

/** Path of the first string in a (schema-output, shallow) value that holds a lone surrogate, or null. */
function loneSurrogatePath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return hasLoneSurrogate(value) ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const found = loneSurrogatePath(item, path === '' ? key : `${path}.${key}`);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Reads a push envelope into what the inbox stores. Pure and total: any
 * envelope yields a draft, a bad payload an InvalidDraft with its reason.
 */
export function interpretMessage(envelope: PushEnvelope, registry: MessageRegistry): InboxDraft {
  const decoded = decodeBase64(envelope.data);
  const rawData = decoded ?? Buffer.from(envelope.data, 'utf8');
  const claimedName = envelope.attributes[DEFAULT_NAME_ATTRIBUTE] ?? null;
  const invalid = (error: string, messageName: string | null = claimedName): InvalidDraft => ({
    kind: 'invalid',
    id: invalidDocId(envelope.subscription, envelope.messageId),
    messageName,
    error: clip(error),
    rawData,
    rawDataForm: decoded === null ? 'UNDECODABLE_BASE64' : 'DECODED',
    payloadHash: sha256Hex(rawData),
  });

  if (decoded === null) return invalid('message.data is not valid base64');
  const type = findMessageType(registry, envelope.attributes);
  if (type === null) {
    const known = registry.map((t) => `${t.name} (attribute ${t.nameAttribute})`).join(', ');
    return invalid(
      claimedName === null
        ? `message name missing: no attribute names a known type; known: ${known}`
        : `unknown message name ${JSON.stringify(claimedName)}; known: ${known}`,
    );
  }
  let text: string;
  try {
    text = utf8.decode(decoded);
  } catch {
    return invalid('message.data is not UTF-8 text', type.name);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return invalid(`message.data is not JSON: ${errorMessage(err)}`, type.name);
  }
  const parsed = type.schema.safeParse(json);
  if (!parsed.success) {
    return invalid(`${type.name} does not match its schema: ${z.prettifyError(parsed.error)}`, type.name);
  }
  const payload = parsed.data as Record<string, unknown>;
  // A JSON escape such as "\ud800" decodes to text Firestore cannot store as is: park the message instead.
  const unpaired = loneSurrogatePath(payload, '');
  if (unpaired !== null) return invalid(`${type.name} payload: ${unpaired} is not valid Unicode (lone surrogate)`, type.name);
  const dedupKey = type.dedupKey(payload);
  const correlationKey = type.correlationKey(payload);
  const canonicalPayload = canonicalJson(payload);
  return {
    kind: 'valid',
    id: messageDocId(type.name, correlationKey, dedupKey),
    legacyId: legacyMessageDocId(type.name, dedupKey),
    messageName: type.name,
    correlationKey,
    dedupKey,
    payload,
    payloadHash: sha256Hex(canonicalPayload),
    canonicalPayload,
    reference: null,
    offloadVariable: type.claimCheck?.variable ?? DEFAULT_OFFLOAD_VARIABLE,
  };
}
