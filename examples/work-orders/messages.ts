import { z } from 'zod';
import { defineMessage, keyString } from '../../functions/src/app';

/**
 * The work-order example's message types: a work order is released by
 * planning (it starts the process), handed over to a service provider, and
 * completed by the provider's message (its line items inline, or in a
 * report a claim check names).
 */

/** Longest free text of one line item, in characters. */
export const MAX_LINE_ITEM_TEXT_CHARS = 1_024;

/** One line of a completion report: what was delivered. */
export const LineItemSchema = z.object({
  itemId: keyString(),
  quantity: z.number().nonnegative(),
  description: z.string().max(MAX_LINE_ITEM_TEXT_CHARS).optional(),
});
export type LineItem = z.infer<typeof LineItemSchema>;

/**
 * A completion report: the line items of a work order. Inline in the
 * message (`lineItems`), as the object a reference names (`report`, or the
 * `reportRef` attribute), or as part of an offloaded payload: "Create
 * invoice" reads it by the `completionReport` variable and bills its items.
 */
export const CompletionReportSchema = z.object({
  workOrderId: keyString().optional(),
  lineItems: z.array(LineItemSchema),
});
export type CompletionReport = z.infer<typeof CompletionReportSchema>;

/** Longest `gs://bucket/object#generation` a report reference may be. */
const MAX_REFERENCE_CHARS = 1_280;

export const WorkOrderCompletedSchema = z.object({
  workOrderId: keyString(),
  completedItems: z.number().int().nonnegative(),
  completionTimestamp: z.iso.datetime({ offset: true }),
  eventId: keyString().optional(),
  /**
   * The report inline: any number of items (a payload over INBOX_OFFLOAD_BYTES
   * is offloaded to the inbox's bucket; INBOX_MAX_DATA_BYTES, Pub/Sub's
   * 10 MiB, bounds the whole message).
   */
  lineItems: z.array(LineItemSchema).optional(),
  /** The report by reference: `gs://bucket/object#generation` in a bucket of INBOX_REFERENCE_BUCKETS. */
  report: z.string().max(MAX_REFERENCE_CHARS).optional(),
});
export type WorkOrderCompleted = z.infer<typeof WorkOrderCompletedSchema>;

/** The process variable the completion's claim check hands over: the report's reference. */
export const REPORT_VARIABLE = 'completionReport';

/** The completion message from the article: the provider reports a work order as done. */
export const WorkOrderCompletedType = defineMessage<WorkOrderCompleted>({
  name: 'WorkOrderCompleted',
  topic: 'work-order-completed',
  schema: WorkOrderCompletedSchema,
  correlationKey: (p) => p.workOrderId,
  dedupKey: (p) => p.eventId ?? `WorkOrderCompleted:${p.workOrderId}`,
  claimCheck: { field: 'report', attribute: 'reportRef', variable: REPORT_VARIABLE, inlineField: 'lineItems' },
});

/** Longest free text a release carries (its description), in characters. */
export const MAX_DESCRIPTION_CHARS = 4_096;

export const WorkOrderReleasedSchema = z.object({
  workOrderId: keyString(),
  eventId: keyString().optional(),
  /** When planning released it. */
  releasedAt: z.iso.datetime({ offset: true }),
  customerId: keyString().optional(),
  /** Where the work is done (a site or address reference). */
  siteId: keyString().optional(),
  description: z.string().max(MAX_DESCRIPTION_CHARS).optional(),
  /** Items the provider is to deliver; the completion reports `completedItems` against it. */
  plannedItems: z.number().int().nonnegative().optional(),
  /** When the work is due, if planning set a date. */
  dueAt: z.iso.datetime({ offset: true }).optional(),
});
export type WorkOrderReleased = z.infer<typeof WorkOrderReleasedSchema>;

/**
 * Planning releases a work order: the message that starts its process (a
 * message start event of that name; the engine allows one process per
 * name). A second release of one work order (another eventId) finds the
 * instance and is parked ALREADY_STARTED; without an eventId, a second
 * release with another payload is a KEY_COLLISION.
 */
export const WorkOrderReleasedType = defineMessage<WorkOrderReleased>({
  name: 'WorkOrderReleased',
  topic: 'work-order-released',
  schema: WorkOrderReleasedSchema,
  correlationKey: (p) => p.workOrderId,
  dedupKey: (p) => p.eventId ?? `WorkOrderReleased:${p.workOrderId}`,
});
