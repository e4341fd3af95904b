/**
 * The workload every design gets, pure and seeded: N messages, of which
 * poison payloads (1 %); the rest complete one work order each, some of
 * which overtake their process (10 %: started only after the retry window)
 * or meet a double token (1 %: two waiting points, ambiguous).
 */
import { interpretMessage } from '../../../../functions/src/receiver/interpret';
import { WORK_ORDER_REGISTRY } from '../../local/names';
import { seededRandom } from '../../../../tools/seeded-random';

export type Fate = 'normal' | 'overtake' | 'double-token' | 'poison';

export interface BenchMessage {
  readonly index: number;
  readonly fate: Fate;
  readonly workOrderId: string | null;
  readonly data: Buffer;
  readonly attributes: Readonly<Record<string, string>>;
  /** The inbox id this system gives it (null for poison: it depends on the Pub/Sub messageId). */
  readonly docId: string | null;
}

export const WORKLOAD_SHARES = { poison: 0.01, overtake: 0.1, doubleToken: 0.01 } as const;

export function planWorkload(n: number, seed: number, run: string): BenchMessage[] {
  const random = seededRandom(seed);
  return Array.from({ length: n }, (_, index) => {
    const r = random();
    if (r < WORKLOAD_SHARES.poison)
      return {
        index,
        fate: 'poison',
        workOrderId: null,
        data: Buffer.from(`<not-json n="${index}"/>`),
        attributes: { eventType: 'WorkOrderCompleted' },
        docId: null,
      };
    const fate: Fate =
      r < WORKLOAD_SHARES.poison + WORKLOAD_SHARES.overtake
        ? 'overtake'
        : r < WORKLOAD_SHARES.poison + WORKLOAD_SHARES.overtake + WORKLOAD_SHARES.doubleToken
          ? 'double-token'
          : 'normal';
    const workOrderId = `WO-${run}-${index}`;
    const data = Buffer.from(
      JSON.stringify({
        workOrderId,
        completedItems: 1 + (index % 50),
        completionTimestamp: '2026-11-30T09:00:00Z',
        eventId: `done-${workOrderId}`,
      }),
    );
    const draft = interpretMessage(
      {
        messageId: 'plan',
        subscription: null,
        data: data.toString('base64'),
        attributes: { eventType: 'WorkOrderCompleted' },
        publishTime: null,
        orderingKey: null,
        deliveryAttempt: null,
      },
      WORK_ORDER_REGISTRY,
      { referenceBuckets: [] },
    );
    return { index, fate, workOrderId, data, attributes: { eventType: 'WorkOrderCompleted' }, docId: draft.id };
  });
}

export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? null;
}
