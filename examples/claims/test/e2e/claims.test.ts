import type { Firestore } from '@google-cloud/firestore';
import { recordId } from '../../../../functions/src/app';
import { instancesByBusinessKey, readInstance } from '../../../../functions/src/operations/instances';
import type { InstanceView, WaitingRow } from '../../../../functions/src/operations/types';
import { listWaiting } from '../../../../functions/src/operations/waiting';
import { freshFirestores } from '../../../../test/support/firestore';
import { waitFor } from '../../../../test/support/wait';
import { CLOSURES, PAYOUTS } from '../../steps';
import { type AppStack, type PeerMessage, startAppStack } from './app-stack';

/**
 * The claims example end to end on the emulators: every message is
 * published on the app's own topic, pushed by the Pub/Sub emulator to the
 * receiver, relayed by the fast path, and every step and timer runs through
 * runJob and fireTimer by the local Cloud Tasks emulator, all built from
 * INBOX_APP=examples/claims. What is checked is read as operators read it
 * (`inbox instances`, `inbox waiting`) and in the app's own collections.
 */

const firestore = freshFirestores();
const { db, projectId } = firestore.project('claims-e2e');
let stack: AppStack;

beforeAll(async () => {
  stack = await startAppStack('examples/claims', projectId);
});
firestore.beforeTerminate(async () => stack.stop());

const claim = (claimId: string, amountCents: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  claimId,
  eventId: `submitted-${claimId}`,
  policyId: 'POL-77',
  claimantId: 'C-5',
  amountCents,
  currency: 'EUR',
  submittedAt: '2026-12-01T08:00:00Z',
  ...extra,
});
const documents = (claimId: string): Record<string, unknown> => ({
  claimId,
  eventId: `documents-${claimId}`,
  documents: [{ kind: 'INVOICE', uri: `portal://${claimId}/invoice.pdf` }],
});

/** The instance of a claim, as `inbox instances CLAIM` shows it (one process, so one instance). */
async function instanceOf(claimId: string): Promise<InstanceView | undefined> {
  const [row] = await instancesByBusinessKey(stack.ops, claimId);
  return row === undefined ? undefined : ((await readInstance(stack.ops, row.id)) ?? undefined);
}

/** Waits until the claim's instance matches `ready`, and returns it. */
const instanceWhen = (claimId: string, what: string, ready: (i: InstanceView) => boolean): Promise<InstanceView> =>
  waitFor(`${claimId}: ${what}`, async () => {
    const instance = await instanceOf(claimId);
    return instance !== undefined && ready(instance) ? instance : undefined;
  });

/** Waits until the claim's token waits at `activityId` for `messageName`, as `inbox waiting --message` lists it. */
const waitingAt = (claimId: string, messageName: string, activityId: string): Promise<WaitingRow> =>
  waitFor(`${claimId} waiting at ${activityId}`, async () => {
    const page = await listWaiting(stack.ops, { messageName, olderThanMs: null }, { size: 50, after: null });
    return page.waitingPoints.find((w) => w.correlationKey === claimId && w.activityId === activityId);
  });

const peersOf = (claimId: string, eventType: string): PeerMessage[] =>
  stack.peers.filter((p) => p.attributes.claimId === claimId && p.attributes.eventType === eventType);
const peerSent = (claimId: string, eventType: string): Promise<PeerMessage> =>
  waitFor(`${eventType} for ${claimId}`, async () => peersOf(claimId, eventType)[0]);

async function payoutOf(store: Firestore, claimId: string): Promise<Record<string, unknown> | undefined> {
  return (await store.collection(PAYOUTS).doc(recordId('payout', claimId)).get()).data();
}

const completed = (i: InstanceView): boolean => i.row.status === 'COMPLETED';

describe('a claim above the approval limit: documents, review, payout', () => {
  test('it waits for the documents with a deadline, then for the review, and pays the approved amount once', async () => {
    await stack.publish('claims-submitted', 'ClaimSubmitted', claim('CLM-A', 250_000));

    await waitingAt('CLM-A', 'DocumentsProvided', 'waitForDocuments');
    const waiting = await instanceOf('CLM-A');
    expect(waiting?.row).toMatchObject({ processKey: 'claim-handling', businessKey: 'CLM-A', status: 'RUNNING' });
    // The deadline: the model's default P10D, as no documentsDeadline was given.
    const [deadline] = waiting?.timers ?? [];
    expect(deadline).toMatchObject({ activityId: 'documentsOverdue', status: 'PENDING' });
    expect(Date.parse(deadline?.dueAt ?? '') - Date.now()).toBeGreaterThan(9.9 * 86_400_000);
    expect((await peerSent('CLM-A', 'DocumentsRequested')).topic).toBe('claims-notices');

    // The same documents event published twice (a sender's retry): one inbox document, one correlation.
    await stack.publish('claims-documents', 'DocumentsProvided', documents('CLM-A'));
    await stack.publish('claims-documents', 'DocumentsProvided', documents('CLM-A'));
    expect(await waitingAt('CLM-A', 'ReviewCompleted', 'reviewCompleted')).toMatchObject({
      gatewayId: 'waitForReview',
      businessKey: 'CLM-A',
    });
    expect((await instanceOf('CLM-A'))?.timers).toEqual([]);
    expect(await peerSent('CLM-A', 'ReviewRequested')).toMatchObject({
      topic: 'claims-review-requests',
      data: { claimId: 'CLM-A', amountCents: 250_000, currency: 'EUR' },
    });

    await stack.publish('claims-reviews', 'ReviewCompleted', {
      claimId: 'CLM-A',
      eventId: 'review-CLM-A',
      decision: 'APPROVED',
      approvedAmountCents: 200_000,
      reviewer: 'rev-7',
    });
    const done = await instanceWhen('CLM-A', 'completed', completed);

    expect(await payoutOf(db, 'CLM-A')).toMatchObject({
      claimId: 'CLM-A',
      amountCents: 200_000,
      currency: 'EUR',
      approvedBy: 'rev-7',
      processInstanceId: done.row.id,
    });
    expect((await db.collection(PAYOUTS).where('claimId', '==', 'CLM-A').get()).size).toBe(1);
    expect(done.jobs.map((j) => [j.activityId, j.status])).toEqual([
      ['requestDocuments', 'DONE'],
      ['requestReview', 'DONE'],
      ['payOut', 'DONE'],
    ]);
    // The audit trail: the three messages, each DONE, the duplicate not among them.
    expect(done.audit.map((a) => [a.row?.messageName, a.row?.status])).toEqual([
      ['ClaimSubmitted', 'DONE'],
      ['DocumentsProvided', 'DONE'],
      ['ReviewCompleted', 'DONE'],
    ]);
    expect((await db.collection('inbox').where('correlationKey', '==', 'CLM-A').get()).size).toBe(3);
    // What the console draws: the app's own model.
    expect(done.model?.processKey).toBe('claim-handling');
    expect(done.model?.xml).toContain('name="Wait for documents"');
  });
});

describe('more documents during the review', () => {
  test('they reach the reviewers, the claim keeps waiting for its review and is paid once it comes', async () => {
    await stack.publish('claims-submitted', 'ClaimSubmitted', claim('CLM-E', 300_000));
    await waitingAt('CLM-E', 'DocumentsProvided', 'waitForDocuments');
    await stack.publish('claims-documents', 'DocumentsProvided', documents('CLM-E'));
    await waitingAt('CLM-E', 'ReviewCompleted', 'reviewCompleted');

    const more = [{ kind: 'PHOTO', uri: 'portal://CLM-E/damage.jpg' }];
    await stack.publish('claims-documents', 'DocumentsProvided', {
      claimId: 'CLM-E',
      eventId: 'documents-CLM-E-2',
      documents: more,
    });
    expect(await peerSent('CLM-E', 'DocumentsAdded')).toMatchObject({
      topic: 'claims-review-requests',
      data: { claimId: 'CLM-E', documents: more },
    });
    await instanceWhen(
      'CLM-E',
      'forwarded, waiting for the review again',
      (i) =>
        i.jobs.some((j) => j.activityId === 'forwardDocuments' && j.status === 'DONE') &&
        i.tokens.some((t) => t.status === 'WAITING_EVENT'),
    );

    await stack.publish('claims-reviews', 'ReviewCompleted', {
      claimId: 'CLM-E',
      eventId: 'review-CLM-E',
      decision: 'APPROVED',
      reviewer: 'rev-2',
    });
    const done = await instanceWhen('CLM-E', 'completed', completed);
    expect(done.jobs.map((j) => j.activityId)).toEqual([
      'requestDocuments',
      'requestReview',
      'forwardDocuments',
      'payOut',
    ]);
    expect(await payoutOf(db, 'CLM-E')).toMatchObject({ amountCents: 300_000, approvedBy: 'rev-2' });
  });
});

describe('the other paths', () => {
  test('below the approval limit: paid automatically after the documents, no review asked', async () => {
    await stack.publish('claims-submitted', 'ClaimSubmitted', claim('CLM-B', 45_000));
    await waitingAt('CLM-B', 'DocumentsProvided', 'waitForDocuments');
    await stack.publish('claims-documents', 'DocumentsProvided', documents('CLM-B'));
    const done = await instanceWhen('CLM-B', 'completed', completed);
    expect(await payoutOf(db, 'CLM-B')).toMatchObject({ amountCents: 45_000, approvedBy: 'AUTOMATIC' });
    expect(done.jobs.map((j) => j.activityId)).toEqual(['requestDocuments', 'payOut']);
    expect(peersOf('CLM-B', 'ReviewRequested')).toEqual([]);
  });

  test('a rejected review ends the claim without a payout', async () => {
    await stack.publish('claims-submitted', 'ClaimSubmitted', claim('CLM-C', 500_000));
    await waitingAt('CLM-C', 'DocumentsProvided', 'waitForDocuments');
    await stack.publish('claims-documents', 'DocumentsProvided', documents('CLM-C'));
    await waitingAt('CLM-C', 'ReviewCompleted', 'reviewCompleted');
    await stack.publish('claims-reviews', 'ReviewCompleted', {
      claimId: 'CLM-C',
      eventId: 'review-CLM-C',
      decision: 'REJECTED',
      reviewer: 'rev-7',
    });
    const done = await instanceWhen('CLM-C', 'completed', completed);
    expect(done.variables).toMatchObject({ decision: 'REJECTED' });
    expect(await payoutOf(db, 'CLM-C')).toBeUndefined();
    expect(done.jobs.map((j) => j.activityId)).toEqual(['requestDocuments', 'requestReview']);
  });

  test('no documents before the deadline: the timer fires, the claim is closed once and the claimant told', async () => {
    await stack.publish('claims-submitted', 'ClaimSubmitted', claim('CLM-D', 45_000, { documentsDeadline: 'PT2S' }));
    const done = await instanceWhen('CLM-D', 'closed', completed);
    expect(done.jobs.map((j) => [j.activityId, j.status])).toEqual([
      ['requestDocuments', 'DONE'],
      ['closeClaim', 'DONE'],
    ]);
    expect((await db.collection(CLOSURES).doc(recordId('closure', 'CLM-D')).get()).data()).toMatchObject({
      claimId: 'CLM-D',
      reason: 'DOCUMENTS_OVERDUE',
      processInstanceId: done.row.id,
    });
    expect((await peerSent('CLM-D', 'ClaimClosed')).topic).toBe('claims-notices');
    expect(await payoutOf(db, 'CLM-D')).toBeUndefined();
    const waitingForDocuments = await listWaiting(
      stack.ops,
      { messageName: 'DocumentsProvided', olderThanMs: null },
      { size: 50, after: null },
    );
    expect(waitingForDocuments.waitingPoints.filter((w) => w.correlationKey === 'CLM-D')).toEqual([]);
  });

  test('no function logged an error on any of these paths', () => {
    expect(stack.logs.filter((l) => l.severity === 'ERROR')).toEqual([]);
  });
});
