import { checkApp } from '../../../../functions/src/apps/check-app';

/**
 * The app as a function start (and `inbox app`, and the deploy) sees it:
 * loaded from its folder, its model checked against its steps and
 * messages, and the topology the deploy creates: its own names only.
 */
describe('examples/claims as the system loads it', () => {
  test('one process, three inbound topics with their push subscriptions, its dead-letter topic, two topics it publishes to', async () => {
    const checked = await checkApp({ app: 'examples/claims', bpmnDir: null });
    expect(checked.engine.processKeys).toEqual(['claim-handling']);
    expect(checked.steps).toEqual(['closeClaim', 'forwardDocuments', 'payOut', 'requestDocuments', 'requestReview']);
    expect(checked.topology).toEqual({
      app: 'claims',
      inbound: [
        { topic: 'claims-submitted', subscription: 'claims-submitted-push', messages: ['ClaimSubmitted'] },
        { topic: 'claims-documents', subscription: 'claims-documents-push', messages: ['DocumentsProvided'] },
        { topic: 'claims-reviews', subscription: 'claims-reviews-push', messages: ['ReviewCompleted'] },
      ],
      deadLetter: { topic: 'claims-dlt', subscription: 'claims-dlt-push' },
      publishes: ['claims-notices', 'claims-review-requests'],
      collections: ['payouts', 'claimClosures'],
    });
  });

  test('no work-order name anywhere in what it declares', async () => {
    const { topology } = await checkApp({ app: 'examples/claims', bpmnDir: null });
    expect(JSON.stringify(topology)).not.toMatch(/work.?order|invoice|escalation/i);
  });
});
