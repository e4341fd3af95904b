import { registryOf } from '../../../../functions/src/apps/load-app';
import type { InboxDraft, ValidDraft } from '../../../../functions/src/inbox/draft';
import { parsePushEnvelope } from '../../../../functions/src/receiver/envelope';
import { interpretMessage } from '../../../../functions/src/receiver/interpret';
import app from '../../index';
import { ClaimSubmittedSchema } from '../../messages';

/**
 * The claims example's message types as the receiver reads them: each
 * envelope goes through the receiver's own interpretation (pure) with the
 * app's registry, so what is tested here is what the inbox will store or
 * park.
 */

const registry = registryOf(app);

function read(name: string, payload: unknown): InboxDraft {
  const parsed = parsePushEnvelope({
    message: {
      data: Buffer.from(JSON.stringify(payload)).toString('base64'),
      attributes: { eventType: name },
      messageId: 'm-1',
    },
    subscription: 'projects/p/subscriptions/claims-submitted-push',
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return interpretMessage(parsed.envelope, registry, { referenceBuckets: [] });
}

function valid(name: string, payload: unknown): ValidDraft {
  const draft = read(name, payload);
  if (draft.kind !== 'valid') throw new Error(`expected a valid ${name}, got: ${draft.error}`);
  return draft;
}

function invalidBecause(name: string, payload: unknown): string {
  const draft = read(name, payload);
  if (draft.kind !== 'invalid')
    throw new Error(`expected ${name} to be parked INVALID_PAYLOAD, but it was read as valid`);
  return draft.error;
}

const submitted = {
  claimId: 'CLM-1',
  eventId: 'sub-1',
  policyId: 'POL-1',
  claimantId: 'C-1',
  amountCents: 45_000,
  currency: 'EUR',
  submittedAt: '2026-12-01T08:00:00Z',
};
const documents = {
  claimId: 'CLM-1',
  eventId: 'doc-1',
  documents: [{ kind: 'INVOICE', uri: 'portal://CLM-1/invoice.pdf' }],
};
const review = { claimId: 'CLM-1', eventId: 'rev-1', decision: 'APPROVED', reviewer: 'rev-7' };

describe('a valid message: keys and payload', () => {
  test.each([
    ['ClaimSubmitted', submitted, 'sub-1'],
    ['DocumentsProvided', documents, 'doc-1'],
    ['ReviewCompleted', review, 'rev-1'],
  ])("%s is correlated by claimId and deduplicated by the sender's eventId", (name, payload, eventId) => {
    const draft = valid(name, { ...payload, claimId: '  CLM-1 ' });
    expect(draft).toMatchObject({ messageName: name, correlationKey: 'CLM-1', dedupKey: eventId });
  });

  test('fields the type does not declare are dropped, never stored (they would become process variables)', () => {
    expect(valid('ClaimSubmitted', { ...submitted, internalScore: 3 }).payload).not.toHaveProperty('internalScore');
  });

  test('two documents events for one claim (another eventId) are two messages, not a collision; the same one again is one', () => {
    const first = valid('DocumentsProvided', documents);
    expect(valid('DocumentsProvided', { ...documents, eventId: 'doc-2' }).id).not.toBe(first.id);
    expect(valid('DocumentsProvided', documents).id).toBe(first.id);
  });

  test('one eventId reused by two types of one claim: two messages (the name is part of the identity)', () => {
    expect(valid('ReviewCompleted', { ...review, eventId: 'x-1' }).id).not.toBe(
      valid('DocumentsProvided', { ...documents, eventId: 'x-1' }).id,
    );
  });

  test("a claim may give its own documents deadline; one no timer could use is refused at receipt, with the timer's reason", () => {
    expect(ClaimSubmittedSchema.parse({ ...submitted, documentsDeadline: 'P3D' }).documentsDeadline).toBe('P3D');
    const monthly = ClaimSubmittedSchema.safeParse({ ...submitted, documentsDeadline: 'P1M' });
    expect(monthly.success).toBe(false);
    expect(monthly.error?.issues[0]?.message).toMatch(/years or months/);
  });
});

describe('what the receiver parks INVALID_PAYLOAD, with the reason', () => {
  test.each([
    ['ClaimSubmitted', { ...submitted, eventId: undefined }, 'eventId'],
    ['ClaimSubmitted', { ...submitted, claimId: '   ' }, 'claimId'],
    ['ClaimSubmitted', { ...submitted, currency: 'eur' }, 'currency'],
    ['ClaimSubmitted', { ...submitted, amountCents: 12.5 }, 'amountCents'],
    ['ClaimSubmitted', { ...submitted, amountCents: -1 }, 'amountCents'],
    ['ClaimSubmitted', { ...submitted, submittedAt: 'yesterday' }, 'submittedAt'],
    ['DocumentsProvided', { ...documents, documents: [] }, 'documents'],
    ['DocumentsProvided', { ...documents, documents: [{ kind: 'SELFIE', uri: 'x' }] }, 'documents'],
    ['ReviewCompleted', { ...review, decision: 'MAYBE' }, 'decision'],
    ['ReviewCompleted', { ...review, reviewer: undefined }, 'reviewer'],
  ])('%s with a bad %#: names the field', (name, payload, field) => {
    expect(invalidBecause(name, payload)).toContain(field);
  });

  test('a message name the app does not declare', () => {
    expect(invalidBecause('ClaimPaid', submitted)).toMatch(/ClaimPaid/);
  });
});
