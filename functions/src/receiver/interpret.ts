import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../core/hash';
import { invalidDocId, legacyMessageDocId, messageDocId } from '../inbox/ids';
import type { InboxDraft, InvalidDraft, PushEnvelope } from '../inbox/draft';
import { decodeBase64, hasLoneSurrogate } from './envelope';
import { DEFAULT_NAME_ATTRIBUTE, findMessageType, type MessageRegistry, type MessageType } from './registry';
import { errorMessage } from '../core/errors';
import { gsUri, parseGsUri } from '../core/gs-uri';
import { DEFAULT_OFFLOAD_VARIABLE, type ReferenceClaim } from '../inbox/claim-check';

/** What interpretMessage needs to know about claim checks (config.claims). */
export interface ClaimRules {
  /** INBOX_REFERENCE_BUCKETS: the only buckets a sender's reference may name. Empty: no reference is accepted. */
  readonly referenceBuckets: readonly string[];
}

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

type ReadReference =
  { readonly ok: true; readonly claim: ReferenceClaim | null } | { readonly ok: false; readonly error: string };

/**
 * The claim-check reference a message carries in its type's declared field
 * or attribute, checked for form (a generation is required) and against the
 * allow-list; never fetched. Both carriers with different text is refused:
 * which of the two reports the sender meant is not ours to guess.
 */
function readReference(
  type: MessageType,
  payload: Readonly<Record<string, unknown>>,
  attributes: Readonly<Record<string, string>>,
  rules: ClaimRules,
): ReadReference {
  const spec = type.claimCheck;
  if (spec === undefined) return { ok: true, claim: null };
  const fieldValue = spec.field === undefined ? undefined : payload[spec.field];
  const attributeValue =
    spec.attribute !== undefined && Object.prototype.hasOwnProperty.call(attributes, spec.attribute)
      ? attributes[spec.attribute]
      : undefined;
  const fail = (error: string): ReadReference => ({ ok: false, error: `${type.name}: ${error}` });
  if (fieldValue !== undefined && typeof fieldValue !== 'string')
    return fail(`field "${spec.field ?? ''}" must be a gs://bucket/object#generation text`);
  if (fieldValue !== undefined && attributeValue !== undefined && fieldValue !== attributeValue) {
    return fail(
      `field "${spec.field ?? ''}" (${JSON.stringify(fieldValue)}) and attribute "${spec.attribute ?? ''}" (${JSON.stringify(attributeValue)}) carry different references; send one reference, in one of them`,
    );
  }
  const carried: {
    readonly carriedIn: ReferenceClaim['carriedIn'];
    readonly name: string;
    readonly text: string;
  } | null =
    fieldValue !== undefined
      ? { carriedIn: 'field', name: spec.field ?? '', text: fieldValue }
      : attributeValue !== undefined
        ? { carriedIn: 'attribute', name: spec.attribute ?? '', text: attributeValue }
        : null;
  if (carried === null) return { ok: true, claim: null };
  const where = `${carried.carriedIn} "${carried.name}"`;
  // Both ways at once: which one the sender meant to be billed is not ours to guess.
  if (spec.inlineField !== undefined && payload[spec.inlineField] !== undefined) {
    return fail(
      `carries its data both inline (field "${spec.inlineField}") and by reference (${where}); send one of them`,
    );
  }
  const parsed = parseGsUri(carried.text);
  if (!parsed.ok)
    return fail(`${where} is not a usable reference (${JSON.stringify(carried.text.slice(0, 200))}): ${parsed.error}`);
  const { bucket } = parsed.value;
  if (!rules.referenceBuckets.includes(bucket)) {
    const allowed =
      rules.referenceBuckets.length === 0 ? 'none is configured' : `allowed: ${rules.referenceBuckets.join(', ')}`;
    return fail(
      `${where} names bucket "${bucket}", which is not in the receiver's INBOX_REFERENCE_BUCKETS (${allowed}); the reference for variable ${spec.variable} was not read. Upload the object to an allowed bucket and send a new message, or have the operator add the bucket`,
    );
  }
  return {
    ok: true,
    claim: {
      ...parsed.value,
      uri: gsUri(parsed.value),
      carriedIn: carried.carriedIn,
      name: carried.name,
      variable: spec.variable,
    },
  };
}

/**
 * The payload as hashed and stored: an attribute-carried reference is part
 * of the content (under the type's field, else under the attribute's name).
 * Otherwise a second publish of one completion with another report (a new
 * upload) would hash equal and be dropped as a DUPLICATE; this way it is a
 * KEY_COLLISION, parked where an operator sees it, and the same reference
 * by field or by attribute is the same message.
 */
function withReference(
  payload: Record<string, unknown>,
  type: MessageType,
  claim: ReferenceClaim | null,
): Record<string, unknown> {
  if (claim === null || claim.carriedIn === 'field') return payload;
  return { ...payload, [type.claimCheck?.field ?? claim.name]: claim.uri };
}

/**
 * Reads a push envelope into what the inbox stores. Pure and total: any
 * envelope yields a draft, a bad payload (or a claim-check reference of bad
 * form or into a bucket outside `claims.referenceBuckets`) an InvalidDraft
 * with its reason.
 */
export function interpretMessage(envelope: PushEnvelope, registry: MessageRegistry, claims: ClaimRules): InboxDraft {
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
  const schemaOutput = parsed.data as Record<string, unknown>;
  // A JSON escape such as "\ud800" decodes to text Firestore cannot store as is: park the message instead.
  const unpaired = loneSurrogatePath(schemaOutput, '');
  if (unpaired !== null)
    return invalid(`${type.name} payload: ${unpaired} is not valid Unicode (lone surrogate)`, type.name);
  const reference = readReference(type, schemaOutput, envelope.attributes, claims);
  if (!reference.ok) return invalid(reference.error, type.name);
  const payload = withReference(schemaOutput, type, reference.claim);
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
    reference: reference.claim,
    // The type's variable holds the sender's reference when there is one; an offloaded payload's then goes to its own.
    offloadVariable:
      reference.claim === null ? (type.claimCheck?.variable ?? DEFAULT_OFFLOAD_VARIABLE) : DEFAULT_OFFLOAD_VARIABLE,
  };
}
