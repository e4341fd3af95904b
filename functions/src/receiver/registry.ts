import { z } from 'zod';
import { MAX_GS_URI_CHARS } from '../core/gs-uri';

/**
 * What the inbox knows about one kind of message: how to recognise it, how to
 * validate it, which process it addresses (correlation key) and which messages
 * are the same message (dedup key). Add a message type here and nowhere else.
 */
export interface MessageType<P = unknown> {
  /** Message name, also the BPMN message name it correlates to. */
  readonly name: string;
  /** Attribute whose value names the type. Default `eventType`. */
  readonly nameAttribute: string;
  /** Validates the decoded JSON; unknown fields are dropped (never stored). */
  readonly schema: z.ZodType<P>;
  /** The process variable value the message is correlated on. */
  correlationKey(payload: P): string;
  /**
   * Identity of the business event. Prefer the sender's event id: without it,
   * two different events for one key (say, two tranches) share a dedup key and
   * the second becomes a KEY_COLLISION, parked rather than swallowed.
   */
  dedupKey(payload: P): string;
  /**
   * Where a message of this type may carry a claim-check reference
   * (`gs://bucket/object#generation`) and which process variable receives
   * it; also the variable of the reference to an offloaded payload. Absent:
   * no reference is read, and an offloaded payload's reference goes to
   * DEFAULT_OFFLOAD_VARIABLE (inbox/claim-check.ts).
   */
  readonly claimCheck?: ClaimCheckSpec;
}

/** A message type's claim check: a payload field or an attribute (or both: the field wins) carrying the reference. */
export interface ClaimCheckSpec {
  /** Top-level payload field (a string in the schema) that may hold the reference. */
  readonly field?: string;
  /** Attribute that may hold it. */
  readonly attribute?: string;
  /** Process variable that receives the reference, by either route (by reference or offloaded). */
  readonly variable: string;
  /** Payload field that carries the same data inline; a message with both it and a reference is refused (INVALID_PAYLOAD). */
  readonly inlineField?: string;
}

/** Default attribute that carries the message name. */
export const DEFAULT_NAME_ATTRIBUTE = 'eventType';

/** Bounded strings keep every stored payload far below Firestore's 1 MiB document limit. */
/**
 * Longest correlation or dedup key a message may carry, in characters.
 * startProcess refuses a correlation variable longer than this, or with
 * whitespace around it (a message's key is trimmed), because no message
 * could ever be correlated to it.
 */
export const MAX_KEY_CHARS = 256;

const Key = z.string().trim().min(1).max(MAX_KEY_CHARS);

/** Longest free text of one line item, in characters. */
export const MAX_LINE_ITEM_TEXT_CHARS = 1_024;

/** One line of a completion report: what was delivered. */
export const LineItemSchema = z.object({
  itemId: Key,
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
  workOrderId: Key.optional(),
  lineItems: z.array(LineItemSchema),
});
export type CompletionReport = z.infer<typeof CompletionReportSchema>;

export const WorkOrderCompletedSchema = z.object({
  workOrderId: Key,
  completedItems: z.number().int().nonnegative(),
  completionTimestamp: z.iso.datetime({ offset: true }),
  eventId: Key.optional(),
  /**
   * The report inline: any number of items (a payload over INBOX_OFFLOAD_BYTES
   * is offloaded to the inbox's bucket; INBOX_MAX_DATA_BYTES, Pub/Sub's
   * 10 MiB, bounds the whole message).
   */
  lineItems: z.array(LineItemSchema).optional(),
  /** The report by reference: `gs://bucket/object#generation` in a bucket of INBOX_REFERENCE_BUCKETS. */
  report: z.string().max(MAX_GS_URI_CHARS).optional(),
});
export type WorkOrderCompleted = z.infer<typeof WorkOrderCompletedSchema>;

/** The completion message from the article: the provider reports a work order as done. */
export const WorkOrderCompletedType: MessageType<WorkOrderCompleted> = {
  name: 'WorkOrderCompleted',
  nameAttribute: DEFAULT_NAME_ATTRIBUTE,
  schema: WorkOrderCompletedSchema,
  correlationKey: (p) => p.workOrderId,
  dedupKey: (p) => p.eventId ?? `WorkOrderCompleted:${p.workOrderId}`,
  claimCheck: { field: 'report', attribute: 'reportRef', variable: 'completionReport', inlineField: 'lineItems' },
};

/** Longest free text a release carries (its description), in characters: 4 KiB of UTF-16, far below the document limit. */
export const MAX_DESCRIPTION_CHARS = 4_096;

export const WorkOrderReleasedSchema = z.object({
  workOrderId: Key,
  eventId: Key.optional(),
  /** When planning released it. */
  releasedAt: z.iso.datetime({ offset: true }),
  customerId: Key.optional(),
  /** Where the work is done (a site or address reference). */
  siteId: Key.optional(),
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
export const WorkOrderReleasedType: MessageType<WorkOrderReleased> = {
  name: 'WorkOrderReleased',
  nameAttribute: DEFAULT_NAME_ATTRIBUTE,
  schema: WorkOrderReleasedSchema,
  correlationKey: (p) => p.workOrderId,
  dedupKey: (p) => p.eventId ?? `WorkOrderReleased:${p.workOrderId}`,
};

/** A registry is a list; order does not matter because names must be unique. */
export type MessageRegistry = readonly MessageType[];

/**
 * Erases the payload type so types of different payloads share one list.
 * No cast: method parameters are bivariant, so MessageType<P> is a MessageType.
 */
function entry<P>(type: MessageType<P>): MessageType {
  return type;
}

export const DEFAULT_REGISTRY: MessageRegistry = [entry(WorkOrderCompletedType), entry(WorkOrderReleasedType)];

/** The type an attribute set names, or null. Own properties only (no prototype lookups). */
export function findMessageType(registry: MessageRegistry, attributes: Readonly<Record<string, string>>): MessageType | null {
  for (const type of registry) {
    if (Object.prototype.hasOwnProperty.call(attributes, type.nameAttribute) && attributes[type.nameAttribute] === type.name) {
      return type;
    }
  }
  return null;
}
