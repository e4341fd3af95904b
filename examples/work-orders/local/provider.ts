import type { Message, PubSub, Subscription } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';
import { z } from 'zod';
import { gsUri } from '../../../functions/src/core/gs-uri';
import { COMPLETION_ATTRIBUTES, completionOf, inlineReportCompletionOf, lineItemsOf } from './completions';

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
 *   the orders whose provider never answers, nobody does);
 * - `reportByReference`: a claim check by the sender: the report
 *   (`{workOrderId, lineItems}`, `reportLineItems` items) is uploaded to the
 *   provider's bucket and the completion carries `report:
 *   gs://bucket/object#generation`, the generation the upload got;
 * - `reportInline`: the completion carries its `reportLineItems` line items
 *   inline (several MiB: the receiver offloads it to the inbox's bucket).
 *
 * Only a message with `eventType: WorkOrderHandedOver` is a hand-over. The
 * process also publishes reminders to the same topic (`WorkOrderOverdue`,
 * from escalateOverdueWorkOrder): the provider counts them, once per
 * escalation job (the `jobId` attribute; a re-run publishes again), and
 * answers none of them: a reminder is not a new work order.
 */
export type ProviderScript = 'answer' | 'duplicate' | 'conflict' | 'silent' | 'reportByReference' | 'reportInline';

/** Line items of a report when the work order's `reportLineItems` variable does not say. */
export const DEFAULT_REPORT_LINE_ITEMS = 1_000;

const HandOver = z.object({
  workOrderId: z.string().min(1),
  variables: z
    .object({
      providerScript: z
        .enum(['answer', 'duplicate', 'conflict', 'silent', 'reportByReference', 'reportInline'])
        .optional(),
      // A string: the demo's variables are text (a count in a process variable is a number elsewhere, so both are read).
      reportLineItems: z.coerce.number().int().min(0).max(100_000).optional(),
    })
    .passthrough()
    .default({}),
});

export { COMPLETION_ATTRIBUTES, completionOf, inlineReportCompletionOf, lineItemsOf } from './completions';

/** A report the provider sent with its completion: how, how many items, how large, and where (by reference). */
export interface SentReport {
  readonly route: 'reference' | 'inline';
  readonly lineItems: number;
  /** Bytes of the uploaded object (by reference) or of the completion's JSON as published (inline). */
  readonly bytes: number;
  /** The reference the completion carried (`gs://bucket/object#generation`); null inline. */
  readonly uri: string | null;
}

export interface ProviderOptions {
  /** Usual time between hand-over and completion, ms. */
  readonly delayMs: number;
  /** Share of work orders answered at once, often before the process waits for the answer (0..1). */
  readonly earlyRatio: number;
  readonly random?: () => number;
  /**
   * Where `reportByReference` uploads its reports: a client and the
   * provider's own bucket. Without it such a work order is not answered
   * (counted as a failure, acked: asking again would not help).
   */
  readonly reports?: { readonly storage: Storage; readonly bucket: string };
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
  /** Answers that failed (a publish or upload: the hand-over is redelivered), or could not be given (no report bucket). */
  readonly failures: number;
  /** The large reports sent (`reportByReference`, `reportInline`), per work order. */
  readonly reports: Readonly<Record<string, SentReport>>;
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
export function startProvider(
  pubsub: PubSub,
  subscription: string,
  completionTopic: string,
  options: ProviderOptions,
): SimulatedProvider {
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
  const reports = new Map<string, SentReport>();
  const topic = pubsub.topic(completionTopic);
  const publish = async (payload: Record<string, unknown>): Promise<void> => {
    await topic.publishMessage({ json: payload, attributes: COMPLETION_ATTRIBUTES });
    completionsPublished += 1;
  };

  /** Uploads the report, then publishes a completion that names the very generation the upload created. */
  const answerByReference = async (workOrderId: string, count: number): Promise<void> => {
    if (options.reports === undefined) throw new NoReportBucketError();
    const data = Buffer.from(JSON.stringify({ workOrderId, lineItems: lineItemsOf(count) }), 'utf8');
    const file = options.reports.storage.bucket(options.reports.bucket).file(`reports/${workOrderId}.json`);
    await file.save(data, { resumable: false, contentType: 'application/json' });
    const generation = file.metadata.generation;
    if (generation === undefined) throw new Error(`upload of ${file.name}: no generation in the answer`);
    const uri = gsUri({ bucket: options.reports.bucket, object: file.name, generation: String(generation) });
    await publish({ ...completionOf(workOrderId, count), report: uri });
    reports.set(workOrderId, { route: 'reference', lineItems: count, bytes: data.length, uri });
  };

  const answer = async (workOrderId: string, script: ProviderScript, reportLineItems: number): Promise<void> => {
    if (script === 'silent') return;
    if (script === 'reportByReference') return answerByReference(workOrderId, reportLineItems);
    if (script === 'reportInline') {
      const completion = inlineReportCompletionOf(workOrderId, reportLineItems);
      await publish(completion);
      reports.set(workOrderId, {
        route: 'inline',
        lineItems: reportLineItems,
        bytes: Buffer.byteLength(JSON.stringify(completion), 'utf8'),
        uri: null,
      });
      return;
    }
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
      answer(
        workOrderId,
        variables.providerScript ?? 'answer',
        variables.reportLineItems ?? DEFAULT_REPORT_LINE_ITEMS,
      ).then(
        () => {
          answered.add(workOrderId);
          message.ack();
        },
        (err: unknown) => {
          failures += 1;
          if (err instanceof NoReportBucketError) message.ack();
          else message.nack();
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
      return {
        received,
        handedOver,
        completionsPublished,
        reminders: Object.values(byWorkOrder).reduce((n, c) => n + c, 0),
        remindersByWorkOrder: byWorkOrder,
        ignored,
        failures,
        reports: Object.fromEntries(reports),
      };
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      sub.removeListener('message', onMessage);
      await sub.close();
    },
  };
}

/** A `reportByReference` work order with no report bucket configured: a permanent inability, not worth a redelivery. */
class NoReportBucketError extends Error {
  override readonly name = 'NoReportBucketError';
  constructor() {
    super('the provider has no report bucket (ProviderOptions.reports)');
  }
}

function safeJson(data: Buffer): unknown {
  try {
    return JSON.parse(data.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}
