/**
 * The messages of a chaos run's plan: a work order's tranche completions,
 * and the poison that must be parked, as bytes with the inbox id the
 * receiver gives them.
 */
import { WORK_ORDER_REGISTRY } from '../local/names';
import { interpretMessage } from '../../../functions/src/receiver/interpret';

export type PoisonVariant = 'not JSON' | 'unknown type' | 'schema violation' | 'no type attribute' | 'not UTF-8';
export const POISON_VARIANTS: readonly PoisonVariant[] = [
  'not JSON',
  'unknown type',
  'schema violation',
  'no type attribute',
  'not UTF-8',
];

export type PlannedMessage =
  /** Tranche `tranche` of a work order: must end DONE, correlated once. */
  | {
      readonly kind: 'completion';
      readonly workOrderId: string;
      readonly tranche: number;
      readonly data: Buffer;
      readonly docId: string;
    }
  /** The same bytes as message `of` published again: must add nothing. */
  | { readonly kind: 'duplicate'; readonly of: number; readonly data: Buffer; readonly docId: string }
  /** Message `of`'s event id with another payload: one of the two ends PARKED KEY_COLLISION, the other DONE. */
  | {
      readonly kind: 'collision';
      readonly of: number;
      readonly data: Buffer;
      readonly docId: string;
      readonly collisionIds: readonly [string, string];
    }
  /** Unreadable: PARKED with its reason, under an id known only once published (subscription + messageId). */
  | {
      readonly kind: 'poison';
      readonly variant: PoisonVariant;
      readonly data: Buffer;
      readonly attributes: Readonly<Record<string, string>>;
    };

export const COMPLETION_ATTRIBUTES = { eventType: 'WorkOrderCompleted' } as const;

/** The inbox id and payload hash the receiver gives these bytes (the production code decides, not a copy of it). */
export function interpreted(data: Buffer): { id: string; payloadHash: string } {
  const draft = interpretMessage(
    {
      messageId: 'plan',
      subscription: null,
      data: data.toString('base64'),
      attributes: COMPLETION_ATTRIBUTES,
      publishTime: null,
      orderingKey: null,
      deliveryAttempt: null,
    },
    WORK_ORDER_REGISTRY,
    { referenceBuckets: [] },
  );
  if (draft.kind !== 'valid') throw new Error(`planned completion is not valid: ${draft.error}`);
  return { id: draft.id, payloadHash: draft.payloadHash };
}

export const completionData = (workOrderId: string, tranche: number, completedItems: number): Buffer =>
  Buffer.from(
    JSON.stringify({
      workOrderId,
      completedItems,
      completionTimestamp: '2026-11-30T08:00:00.000Z',
      eventId: `${workOrderId}/tranche-${tranche}`,
    }),
  );

export function poisonData(variant: PoisonVariant, n: number): { data: Buffer; attributes: Record<string, string> } {
  switch (variant) {
    case 'not JSON':
      return { data: Buffer.from(`<poison n="${n}"/>`), attributes: { ...COMPLETION_ATTRIBUTES } };
    case 'unknown type':
      return {
        data: Buffer.from(JSON.stringify({ workOrderId: `poison-${n}` })),
        attributes: { eventType: 'WorkOrderCancelled' },
      };
    case 'schema violation':
      return {
        data: Buffer.from(
          JSON.stringify({ workOrderId: `poison-${n}`, completedItems: -n, completionTimestamp: 'soon' }),
        ),
        attributes: { ...COMPLETION_ATTRIBUTES },
      };
    case 'no type attribute':
      return { data: Buffer.from(JSON.stringify({ poison: n })), attributes: {} };
    case 'not UTF-8':
      return { data: Buffer.from([0xff, 0xfe, 0xfd, n & 0xff]), attributes: { ...COMPLETION_ATTRIBUTES } };
  }
}
