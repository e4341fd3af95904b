import { PermanentJobError } from '../../../../functions/src/app';
import { payoutOf } from '../../payout';
import { claimSteps, CLOSURES, NOTICES_TOPIC, PAYOUTS, REVIEW_REQUESTS_TOPIC } from '../../steps';
import { fakeContext, stepContext } from './fake-context';

/**
 * The handlers run at least once (a retry, a crash after the write, a lost
 * answer all run them again): each is run twice here and must have done
 * its effect once. The context is an in-memory AppContext (fake-context.ts).
 */

const claim = { amountCents: 45_000, currency: 'EUR', policyId: 'POL-1', claimantId: 'C-1' };

const handler = (
  steps: ReturnType<typeof claimSteps>,
  id: string,
): NonNullable<ReturnType<typeof claimSteps>[string]> => {
  const h = steps[id];
  if (h === undefined) throw new Error(`no handler ${id}`);
  return h;
};

describe('payOut', () => {
  test('run twice for one claim, it writes one payout and reports the first amount the second time', async () => {
    const fake = fakeContext();
    const payOut = handler(claimSteps(fake.ctx), 'payOut');
    const first = await payOut(stepContext('payOut', 'CLM-1', claim));
    const second = await payOut(stepContext('payOut', 'CLM-1', claim));
    const payouts = [...fake.docs].filter(([path]) => path.startsWith(`${PAYOUTS}/`));
    expect(payouts).toHaveLength(1);
    expect(payouts[0]?.[1]).toMatchObject({
      claimId: 'CLM-1',
      amountCents: 45_000,
      currency: 'EUR',
      approvedBy: 'AUTOMATIC',
      jobId: 'job-payOut-1',
    });
    expect(first).toEqual({ payoutId: second.payoutId, paidCents: 45_000 });
    expect(second).toEqual({ payoutId: first.payoutId, paidCents: 45_000, payoutAlreadyExisted: true });
  });

  test('a second job for the same claim (a double token that reached "Pay out") pays nothing more', async () => {
    const fake = fakeContext();
    const payOut = handler(claimSteps(fake.ctx), 'payOut');
    await payOut(stepContext('payOut', 'CLM-2', claim, 'job-a'));
    const again = await payOut(stepContext('payOut', 'CLM-2', { ...claim, amountCents: 99_999 }, 'job-b'));
    expect(again).toMatchObject({ paidCents: 45_000, payoutAlreadyExisted: true });
    expect([...fake.docs.keys()].filter((p) => p.startsWith(`${PAYOUTS}/`))).toHaveLength(1);
  });

  test('two claims get two payouts (the record id is the claim, not a constant)', async () => {
    const fake = fakeContext();
    const payOut = handler(claimSteps(fake.ctx), 'payOut');
    const a = await payOut(stepContext('payOut', 'CLM-3a', claim));
    const b = await payOut(stepContext('payOut', 'CLM-3b', claim));
    expect(a.payoutId).not.toBe(b.payoutId);
    expect(fake.docs.size).toBe(2);
  });

  test('after a review it pays the approved amount, approved by the reviewer', async () => {
    const fake = fakeContext();
    await handler(
      claimSteps(fake.ctx),
      'payOut',
    )(
      stepContext('payOut', 'CLM-4', {
        ...claim,
        amountCents: 250_000,
        decision: 'APPROVED',
        reviewer: 'rev-7',
        approvedAmountCents: 200_000,
      }),
    );
    expect([...fake.docs.values()]).toEqual([expect.objectContaining({ amountCents: 200_000, approvedBy: 'rev-7' })]);
  });

  test('an approved amount above the claimed one fails for good (PermanentJobError) and pays nothing', async () => {
    const fake = fakeContext();
    const run = handler(
      claimSteps(fake.ctx),
      'payOut',
    )(
      stepContext('payOut', 'CLM-5', {
        ...claim,
        decision: 'APPROVED',
        reviewer: 'rev-7',
        approvedAmountCents: 45_001,
      }),
    );
    await expect(run).rejects.toBeInstanceOf(PermanentJobError);
    await expect(run).rejects.toThrow('rev-7 approved 45001 cents, more than the 45000 claimed');
    expect(fake.docs.size).toBe(0);
  });

  test('a Firestore outage during the write is thrown as it is (retried), not taken for "paid already"', async () => {
    const fake = fakeContext();
    const payOut = handler(claimSteps(fake.ctx), 'payOut');
    fake.failNextCreate(Object.assign(new Error('14 UNAVAILABLE'), { code: 14 }));
    const failed = payOut(stepContext('payOut', 'CLM-6', claim));
    await expect(failed).rejects.toThrow('14 UNAVAILABLE');
    await expect(failed).rejects.not.toBeInstanceOf(PermanentJobError);
    expect(await payOut(stepContext('payOut', 'CLM-6', claim))).toEqual({
      payoutId: expect.any(String) as unknown,
      paidCents: 45_000,
    });
  });
});

describe('payoutOf (what "Pay out" pays)', () => {
  test.each([
    ['no amount', { currency: 'EUR' }, 'has no claimed amount and currency'],
    [
      'an amount that is no whole number of cents',
      { ...claim, amountCents: 10.5 },
      'has no claimed amount and currency',
    ],
    ['a rejected review', { ...claim, decision: 'REJECTED' }, 'was not approved (decision "REJECTED")'],
    [
      'an approved amount of zero',
      { ...claim, decision: 'APPROVED', approvedAmountCents: 0 },
      'the approved amount 0 is no amount in cents',
    ],
  ])('%s: no payout, and why', (_, variables, why) => {
    expect(payoutOf(variables, 'CLM-7')).toEqual({ problem: expect.stringContaining(why) as unknown });
  });

  test('the claimId variable wins over the business key', () => {
    expect(payoutOf({ ...claim, claimId: 'CLM-8' }, 'other')).toMatchObject({ claimId: 'CLM-8' });
  });
});

describe('closeClaim', () => {
  test('run twice, it records one closure and tells the claimant each time under the same jobId', async () => {
    const fake = fakeContext();
    const closeClaim = handler(claimSteps(fake.ctx), 'closeClaim');
    const first = await closeClaim(stepContext('closeClaim', 'CLM-9', claim));
    const second = await closeClaim(stepContext('closeClaim', 'CLM-9', claim));
    expect(second).toEqual(first);
    expect([...fake.docs.keys()].filter((p) => p.startsWith(`${CLOSURES}/`))).toHaveLength(1);
    expect(fake.published).toEqual(
      [0, 1].map(() => ({
        topic: NOTICES_TOPIC,
        data: { claimId: 'CLM-9', reason: 'DOCUMENTS_OVERDUE' },
        attributes: { eventType: 'ClaimClosed', claimId: 'CLM-9', jobId: 'job-closeClaim-1' },
      })),
    );
  });
});

describe('the requests publish to the topics the app declares', () => {
  test('requestDocuments: DocumentsRequested to the claimant, with the deadline the claim gave', async () => {
    const fake = fakeContext();
    const out = await handler(
      claimSteps(fake.ctx),
      'requestDocuments',
    )(stepContext('requestDocuments', 'CLM-10', { ...claim, documentsDeadline: 'P5D' }));
    expect(out).toEqual({ documentsRequestedMessageId: 'message-1' });
    expect(fake.published).toEqual([
      {
        topic: NOTICES_TOPIC,
        data: { claimId: 'CLM-10', documentsDeadline: 'P5D' },
        attributes: { eventType: 'DocumentsRequested', claimId: 'CLM-10', jobId: 'job-requestDocuments-1' },
      },
    ]);
  });

  test('requestReview: ReviewRequested to the review team, with amount and documents', async () => {
    const fake = fakeContext();
    const documents = [{ kind: 'INVOICE', uri: 'portal://CLM-11/1' }];
    await handler(
      claimSteps(fake.ctx),
      'requestReview',
    )(stepContext('requestReview', 'CLM-11', { ...claim, documents }));
    expect(fake.published).toEqual([
      {
        topic: REVIEW_REQUESTS_TOPIC,
        data: { claimId: 'CLM-11', amountCents: 45_000, currency: 'EUR', documents },
        attributes: { eventType: 'ReviewRequested', claimId: 'CLM-11', jobId: 'job-requestReview-1' },
      },
    ]);
  });

  test('forwardDocuments: the documents the claimant sent during the review go to the reviewers as DocumentsAdded', async () => {
    const fake = fakeContext();
    const documents = [{ kind: 'PHOTO', uri: 'portal://CLM-12/2' }];
    await handler(
      claimSteps(fake.ctx),
      'forwardDocuments',
    )(stepContext('forwardDocuments', 'CLM-12', { ...claim, documents }));
    expect(fake.published).toEqual([
      {
        topic: REVIEW_REQUESTS_TOPIC,
        data: { claimId: 'CLM-12', documents },
        attributes: { eventType: 'DocumentsAdded', claimId: 'CLM-12', jobId: 'job-forwardDocuments-1' },
      },
    ]);
  });
});
