import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import {
  type AppContext,
  isAlreadyExists,
  PermanentJobError,
  recordId,
  type StepHandler,
} from '../../functions/src/app';
import { claimIdOf, payoutOf } from './payout';

/** The claimant's channel: document requests and closures, by the attribute `eventType`. */
export const NOTICES_TOPIC = 'claims-notices';
/** The review team's queue: a claim above the automatic approval limit. */
export const REVIEW_REQUESTS_TOPIC = 'claims-review-requests';
/** One payout per claim. */
export const PAYOUTS = 'payouts';
/** One closure per claim closed without its documents. */
export const CLOSURES = 'claimClosures';

/** The payout of a claim: hashed, so any claimId is a valid id; one per claim, whatever runs it. */
export const payoutRef = (db: Firestore, claimId: string): DocumentReference =>
  db.collection(PAYOUTS).doc(recordId('payout', claimId));
/** The closure of a claim whose documents did not come in time. */
export const closureRef = (db: Firestore, claimId: string): DocumentReference =>
  db.collection(CLOSURES).doc(recordId('closure', claimId));

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/** The async steps of bpmn/claim-handling.bpmn, by task id. */
export function claimSteps(ctx: AppContext): Readonly<Record<string, StepHandler>> {
  return {
    /**
     * Asks the claimant for the documents (`DocumentsRequested` on the
     * notices topic). At least once: a re-run publishes again, and the
     * claimant's portal deduplicates by the `jobId` attribute.
     */
    requestDocuments: async ({ job, instance }) => {
      const claimId = claimIdOf(instance.variables, instance.businessKey);
      const deadline = instance.variables['documentsDeadline'] ?? null;
      const id = await ctx.publish(NOTICES_TOPIC, json({ claimId, documentsDeadline: deadline }), {
        eventType: 'DocumentsRequested',
        claimId,
        jobId: job.id,
      });
      return { documentsRequestedMessageId: id };
    },

    /**
     * The documents did not come before the deadline: records the closure
     * once (create under the claim's id; a re-run finds it), then tells the
     * claimant (`ClaimClosed`, deduplicated by jobId).
     */
    closeClaim: async ({ job, instance, now }) => {
      const claimId = claimIdOf(instance.variables, instance.businessKey);
      const ref = closureRef(ctx.db(), claimId);
      try {
        await ref.create({
          claimId,
          reason: 'DOCUMENTS_OVERDUE',
          processInstanceId: instance.id,
          jobId: job.id,
          closedAt: now,
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      await ctx.publish(NOTICES_TOPIC, json({ claimId, reason: 'DOCUMENTS_OVERDUE' }), {
        eventType: 'ClaimClosed',
        claimId,
        jobId: job.id,
      });
      return { closureId: ref.id, closedBecause: 'DOCUMENTS_OVERDUE' };
    },

    /** Puts the claim in the review team's queue (`ReviewRequested`, deduplicated by jobId). */
    requestReview: async ({ job, instance }) => {
      const claimId = claimIdOf(instance.variables, instance.businessKey);
      const { amountCents, currency, documents } = instance.variables;
      const id = await ctx.publish(REVIEW_REQUESTS_TOPIC, json({ claimId, amountCents, currency, documents }), {
        eventType: 'ReviewRequested',
        claimId,
        jobId: job.id,
      });
      return { reviewRequestedMessageId: id };
    },

    /**
     * The claimant sent more documents while the claim waits for its
     * review: passes them on to the reviewers (`DocumentsAdded`,
     * deduplicated by jobId); the token goes back to waiting for the review.
     */
    forwardDocuments: async ({ job, instance }) => {
      const claimId = claimIdOf(instance.variables, instance.businessKey);
      const id = await ctx.publish(
        REVIEW_REQUESTS_TOPIC,
        json({ claimId, documents: instance.variables['documents'] }),
        { eventType: 'DocumentsAdded', claimId, jobId: job.id },
      );
      return { documentsForwardedMessageId: id };
    },

    /**
     * Pays the claim once: its payout record with create() under the
     * claim's id. A re-run (a crash after the write, a lost answer) finds
     * the record and pays nothing more. Variables that allow no payout (an
     * approved amount above the claimed one) fail the job for good: no
     * retry changes them, an operator looks (INCIDENT / JOB_FAILED).
     */
    payOut: async ({ job, instance, now }) => {
      const payout = payoutOf(instance.variables, instance.businessKey);
      if ('problem' in payout) throw new PermanentJobError(payout.problem);
      const ref = payoutRef(ctx.db(), payout.claimId);
      try {
        await ref.create({ ...payout, processInstanceId: instance.id, jobId: job.id, paidAt: now });
        return { payoutId: ref.id, paidCents: payout.amountCents };
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const paid: unknown = (await ref.get()).get('amountCents');
        return { payoutId: ref.id, paidCents: typeof paid === 'number' ? paid : null, payoutAlreadyExisted: true };
      }
    },
  };
}
