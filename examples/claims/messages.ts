import { z } from 'zod';
import { defineMessage, durationString, keyString } from '../../functions/src/app';

/**
 * The claims example's message types: a claimant submits a claim (it
 * starts the process), the claimant's documents arrive, and a manual
 * review decides on a claim above the automatic approval limit. Each
 * carries the sender's event id, so two different events for one claim (a
 * second batch of documents, a corrected review) are two messages, never a
 * collision; each is correlated by claimId.
 */

/** Largest amount a claim may name, in cents (a bound against typos, not a business limit). */
export const MAX_AMOUNT_CENTS = 10_000_000_000;
/** Longest free text (a claim's description, a reviewer's note), in characters. */
export const MAX_TEXT_CHARS = 4_096;
/** Most documents one DocumentsProvided may list. */
export const MAX_DOCUMENTS = 50;

/** An amount of money in cents: a positive whole number. */
const amountCents = (): z.ZodNumber => z.number().int().positive().max(MAX_AMOUNT_CENTS);

export const ClaimSubmittedSchema = z.object({
  claimId: keyString(),
  eventId: keyString(),
  policyId: keyString(),
  claimantId: keyString(),
  amountCents: amountCents(),
  /** ISO 4217, upper case. */
  currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as EUR'),
  submittedAt: z.iso.datetime({ offset: true }),
  description: z.string().max(MAX_TEXT_CHARS).optional(),
  /**
   * How long the claimant has to send the documents (an ISO 8601 duration,
   * `P10D` when absent: the model's inbox:default). A value no timer could
   * use is refused at receipt (INVALID_PAYLOAD, with the reason).
   */
  documentsDeadline: durationString().optional(),
});
export type ClaimSubmitted = z.infer<typeof ClaimSubmittedSchema>;

/** A claim is submitted: starts its claim-handling instance (business key: the claimId). */
export const ClaimSubmittedType = defineMessage<ClaimSubmitted>({
  name: 'ClaimSubmitted',
  topic: 'claims-submitted',
  schema: ClaimSubmittedSchema,
  correlationKey: (p) => p.claimId,
  dedupKey: (p) => p.eventId,
});

/** One document the claimant uploaded: what it is and where the claimant's portal keeps it. */
export const DocumentSchema = z.object({
  kind: z.enum(['INVOICE', 'PHOTO', 'POLICE_REPORT', 'MEDICAL_REPORT', 'OTHER']),
  uri: z.string().min(1).max(1_024),
});

export const DocumentsProvidedSchema = z.object({
  claimId: keyString(),
  eventId: keyString(),
  documents: z.array(DocumentSchema).min(1).max(MAX_DOCUMENTS),
});
export type DocumentsProvided = z.infer<typeof DocumentsProvidedSchema>;

/** The claimant's documents: what "Wait for documents" waits for, until the documents deadline. */
export const DocumentsProvidedType = defineMessage<DocumentsProvided>({
  name: 'DocumentsProvided',
  topic: 'claims-documents',
  schema: DocumentsProvidedSchema,
  correlationKey: (p) => p.claimId,
  dedupKey: (p) => p.eventId,
});

export const ReviewCompletedSchema = z.object({
  claimId: keyString(),
  eventId: keyString(),
  decision: z.enum(['APPROVED', 'REJECTED']),
  /** What the reviewer approves, if less than the claimed amount; absent: the claimed amount. */
  approvedAmountCents: amountCents().optional(),
  reviewer: keyString(),
  note: z.string().max(MAX_TEXT_CHARS).optional(),
});
export type ReviewCompleted = z.infer<typeof ReviewCompletedSchema>;

/** A manual review's decision on a claim above the automatic approval limit. */
export const ReviewCompletedType = defineMessage<ReviewCompleted>({
  name: 'ReviewCompleted',
  topic: 'claims-reviews',
  schema: ReviewCompletedSchema,
  correlationKey: (p) => p.claimId,
  dedupKey: (p) => p.eventId,
});
