import type { PushEnvelope } from '../../../../functions/src/inbox/draft';
import { messageDocId } from '../../../../functions/src/inbox/ids';
import { interpretMessage } from '../../../../functions/src/receiver/interpret';
import { WORK_ORDER_REGISTRY } from '../../local/names';
import { MAX_DESCRIPTION_CHARS } from '../../messages';

/** WorkOrderReleased, the message that starts a work order's process: keyed by workOrderId, bounded, unknown fields dropped. */
const env = (payload: unknown): PushEnvelope => ({
  messageId: 'm-1',
  subscription: 'projects/p/subscriptions/s',
  data: Buffer.from(JSON.stringify(payload)).toString('base64'),
  attributes: { eventType: 'WorkOrderReleased' },
  publishTime: null,
  orderingKey: null,
  deliveryAttempt: null,
});
const release = { workOrderId: 'WO-7', releasedAt: '2026-12-01T08:00:00Z' };

describe("WorkOrderReleased in the example's message types", () => {
  test('keyed by workOrderId; without eventId the dedup key is the work order', () => {
    const draft = interpretMessage(env(release), WORK_ORDER_REGISTRY, { referenceBuckets: [] });
    expect(draft).toMatchObject({
      kind: 'valid',
      messageName: 'WorkOrderReleased',
      correlationKey: 'WO-7',
      dedupKey: 'WorkOrderReleased:WO-7',
      payload: release,
    });
    expect(draft.id).toBe(messageDocId('WorkOrderReleased', 'WO-7', 'WorkOrderReleased:WO-7'));
  });

  test("the sender's eventId is the dedup key; what a release carries is kept, unknown fields are dropped", () => {
    const full = {
      ...release,
      eventId: 'rel-1',
      customerId: 'C-9',
      siteId: 'S-3',
      description: 'replace the pump',
      plannedItems: 4,
      dueAt: '2026-12-15T17:00:00+01:00',
    };
    const draft = interpretMessage(env({ ...full, workOrderId: '  WO-7 ', secret: { x: 1 } }), WORK_ORDER_REGISTRY, {
      referenceBuckets: [],
    });
    expect(draft).toMatchObject({ kind: 'valid', correlationKey: 'WO-7', dedupKey: 'rel-1' });
    expect(draft.kind === 'valid' && draft.payload).toEqual(full);
  });

  test.each([
    ['no workOrderId', { releasedAt: release.releasedAt }, 'workOrderId'],
    ['no releasedAt', { workOrderId: 'WO-7' }, 'releasedAt'],
    ['releasedAt not ISO-8601', { ...release, releasedAt: '1.12.2026' }, 'releasedAt'],
    ['a workOrderId over 256 characters', { ...release, workOrderId: 'w'.repeat(257) }, 'workOrderId'],
    ['a description over the bound', { ...release, description: 'd'.repeat(MAX_DESCRIPTION_CHARS + 1) }, 'description'],
    ['negative plannedItems', { ...release, plannedItems: -1 }, 'plannedItems'],
    ['dueAt without offset', { ...release, dueAt: '2026-12-15T17:00:00' }, 'dueAt'],
  ])('%s: invalid (parked INVALID_PAYLOAD by the receiver)', (_name, payload, field) => {
    const draft = interpretMessage(env(payload), WORK_ORDER_REGISTRY, { referenceBuckets: [] });
    expect(draft.kind).toBe('invalid');
    expect(draft.kind === 'invalid' && draft.error).toContain(field);
  });
});
