import type { z } from 'zod';

/**
 * What the inbox knows about one kind of message: how to recognise it, how to
 * validate it, which process it addresses (correlation key) and which messages
 * are the same message (dedup key). An app declares its message types
 * (functions/src/app.ts, defineMessage); the receivers and the relay read
 * them from the app the deployment runs.
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

/**
 * Longest correlation or dedup key a message may carry, in characters.
 * startProcess refuses a correlation variable longer than this, or with
 * whitespace around it (a message's key is trimmed), because no message
 * could ever be correlated to it.
 */
export const MAX_KEY_CHARS = 256;

/** A registry is a list; order does not matter because names must be unique. */
export type MessageRegistry = readonly MessageType[];

/** The type an attribute set names, or null. Own properties only (no prototype lookups). */
export function findMessageType(
  registry: MessageRegistry,
  attributes: Readonly<Record<string, string>>,
): MessageType | null {
  for (const type of registry) {
    if (
      Object.prototype.hasOwnProperty.call(attributes, type.nameAttribute) &&
      attributes[type.nameAttribute] === type.name
    ) {
      return type;
    }
  }
  return null;
}
