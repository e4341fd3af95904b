import { defineApp } from '../../functions/src/app';
import { ClaimSubmittedType, DocumentsProvidedType, ReviewCompletedType } from './messages';
import { CLOSURES, claimSteps, NOTICES_TOPIC, PAYOUTS, REVIEW_REQUESTS_TOPIC } from './steps';

/**
 * The claims example (docs/your-own-process.md): a claim is submitted
 * (ClaimSubmitted starts it), the claimant is asked for documents and has
 * until a deadline to send them (else the claim is closed), a claim below
 * the approval limit is paid at once, a larger one after a manual review
 * approves it; "Pay out" writes one payout per claim.
 */
export default defineApp({
  name: 'claims',
  messages: [ClaimSubmittedType, DocumentsProvidedType, ReviewCompletedType],
  steps: claimSteps,
  publishes: [NOTICES_TOPIC, REVIEW_REQUESTS_TOPIC],
  collections: [PAYOUTS, CLOSURES],
});
