import type { Message, PubSub, Subscription } from '@google-cloud/pubsub';
import { z } from 'zod';

/**
 * How the simulated provider answers one handed-over work order, read from
 * the process variable `providerScript` (the demo sets it per work order;
 * absent means `answer`):
 *
 * - `answer`: one completion;
 * - `duplicate`: the same completion published twice (the inbox keeps one);
 * - `conflict`: two different completions under one event id (the second is
 *   parked as KEY_COLLISION);
 * - `silent`: no answer (the demo publishes the completion itself, or, for
 *   the orders whose provider never answers, nobody does).
 *
 * Only a message with `eventType: WorkOrderHandedOver` is a hand-over. The
 * process also publishes reminders to the same topic (`WorkOrderOverdue`,
 * from escalateOverdueWorkOrder): the provider counts them, once per
 * escalation job (the `jobId` attribute; a re-run publishes again), and
 * answers none of them: a reminder is not a new work order.
 */
export type ProviderScript = 'answer' | 'duplicate' | 'conflict' | 'silent';

const HandOver = z.object({
  workOrderId: z.string().min(1),
  variables: z.object({ providerScript: z.enum(['answer', 'duplicate', 'conflict', 'silent']).optional() }).passthrough().default({}),
});

/** The completion a provider publishes for a work order (`eventId` is the inbox's dedup key). */
export function completionOf(workOrderId: string, completedItems = 12): Record<string, unknown> {
  return { workOrderId, completedItems, completionTimestamp: new Date().toISOString(), eventId: `done-${workOrderId}` };
}

export const COMPLETION_ATTRIBUTES = { eventType: 'WorkOrderCompleted' } as const;

export interface ProviderOptions {
  /** Usual time between hand-over and completion, ms. */
  readonly delayMs: number;
  /** Share of work orders answered at once, often before the process waits for the answer (0..1). */
  readonly earlyRatio: number;
  readonly random?: () => number;
}

export interface ProviderStats {
  /** Messages taken off the subscription, of every kind (redeliveries too). */
  readonly received: number;
  readonly handedOver: number;
  readonly completionsPublished: number;
  /** Distinct reminders (WorkOrderOverdue) received, deduplicated by escalation job. */
  readonly reminders: number;
  /** Distinct reminders per work order. */
  readonly remindersByWorkOrder: Readonly<Record<string, number>>;
  /** Messages that were neither a hand-over nor a reminder, or unreadable: acked and dropped. */
  readonly ignored: number;
  readonly failures: number;
}

/** The eventType attributes the process publishes to the provider topic (jobs/handlers.ts). */
export const PROVIDER_EVENT_TYPES = { handOver: 'WorkOrderHandedOver', reminder: 'WorkOrderOverdue' } as const;

const Reminder = z.object({ workOrderId: z.string().min(1) }).passthrough();

export interface SimulatedProvider {
  stats(): ProviderStats;
  stop(): Promise<void>;
}

/**
 * A work-order provider on the other side of Pub/Sub: pulls the hand-overs
 * the process publishes and answers each on the completion topic after a
 * delay. It answers a work order once even when the hand-over is delivered
 * again (as a real provider deduplicates by work order), and acks a
 * hand-over only after its answer is published.
 */
export function startProvider(pubsub: PubSub, subscription: string, completionTopic: string, options: ProviderOptions): SimulatedProvider {
  const random = options.random ?? Math.random;
  const answered = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  let received = 0;
  let handedOver = 0;
  let completionsPublished = 0;
  let ignored = 0;
  let failures = 0;
  // work order -> escalation job ids whose reminder arrived
  const reminders = new Map<string, Set<string>>();
  const topic = pubsub.topic(completionTopic);
  const publish = async (payload: Record<string, unknown>): Promise<void> => {
    await topic.publishMessage({ json: payload, attributes: COMPLETION_ATTRIBUTES });
    completionsPublished += 1;
  };

  const answer = async (workOrderId: string, script: ProviderScript): Promise<void> => {
    if (script === 'silent') return;
    const completion = completionOf(workOrderId);
    await publish(completion);
    if (script === 'duplicate') await publish(completion);
    if (script === 'conflict') await publish({ ...completion, completedItems: Number(completion.completedItems) + 1 });
  };

  const onReminder = (message: Message): void => {
    const parsed = Reminder.safeParse(safeJson(message.data));
    if (!parsed.success) ignored += 1;
    else {
      const jobs = reminders.get(parsed.data.workOrderId) ?? new Set<string>();
      // Without a jobId (not published by the process) each delivery counts: nothing to deduplicate by.
      jobs.add(message.attributes['jobId'] ?? `message ${message.id}`);
      reminders.set(parsed.data.workOrderId, jobs);
    }
    message.ack();
  };

  const onMessage = (message: Message): void => {
    received += 1;
    const eventType = message.attributes['eventType'];
    if (eventType === PROVIDER_EVENT_TYPES.reminder) return onReminder(message);
    const parsed = eventType === PROVIDER_EVENT_TYPES.handOver ? HandOver.safeParse(safeJson(message.data)) : null;
    if (parsed === null || !parsed.success) {
      ignored += 1;
      message.ack();
      return;
    }
    const { workOrderId, variables } = parsed.data;
    handedOver += 1;
    if (answered.has(workOrderId)) {
      message.ack();
      return;
    }
    const delay = random() < options.earlyRatio ? 0 : options.delayMs;
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer(workOrderId, variables.providerScript ?? 'answer').then(
        () => {
          answered.add(workOrderId);
          message.ack();
        },
        () => {
          failures += 1;
          message.nack();
        },
      );
    }, delay);
    timers.add(timer);
  };

  const sub: Subscription = pubsub.subscription(subscription, { flowControl: { maxMessages: 500 } });
  sub.on('message', onMessage);
  sub.on('error', () => {
    failures += 1;
  });
  return {
    stats: () => {
      const byWorkOrder = Object.fromEntries([...reminders].map(([workOrderId, jobs]) => [workOrderId, jobs.size]));
      return { received, handedOver, completionsPublished, reminders: Object.values(byWorkOrder).reduce((n, c) => n + c, 0), remindersByWorkOrder: byWorkOrder, ignored, failures };
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      sub.removeListener('message', onMessage);
      await sub.close();
    },
  };
}

function safeJson(data: Buffer): unknown {
  try {
    return JSON.parse(data.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}
