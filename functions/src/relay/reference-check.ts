import { withDeadline } from '../core/errors';
import type { ReferenceClaim } from '../inbox/claim-check';
import type { PayloadStore, StatResult, Unavailable } from '../storage/payload-store';

/**
 * The relay's check of a sender's claim-check reference before it correlates
 * the document: one stat of the pinned generation, outside any transaction
 * (no I/O inside one: a transaction may run several times, and a slow
 * storage call would hold the document's lock). Offloaded payloads are not
 * checked: the inbox wrote that object itself before the document existed.
 *
 * What the stat answered, by reference uri, for the relay transaction that
 * runs after it (relay-one.ts): FOUND lets the document correlate; MISSING
 * and CHANGED park it REFERENCE_UNAVAILABLE (decide.ts).
 */
export type ReferenceChecks = Map<string, StatResult>;

/** The reference a document must have checked before it correlates, or null (no reference, or its check is known). */
export function referenceToCheck(
  doc: { readonly reference?: ReferenceClaim | null },
  checks: ReferenceChecks,
): ReferenceClaim | null {
  const reference = doc.reference ?? null;
  if (reference === null || checks.has(reference.uri)) return null;
  return reference;
}

/**
 * Stats the reference's generation under a deadline of `timeoutMs`.
 * Throws what the store throws (an outage, a timeout, a refused
 * permission): the relay counts that as a technical failure, retried with
 * backoff, never a park. Without a store (a relay built without one, as
 * some tests and tools do) the document is not parked either: the
 * configuration is at fault, so it is a failure that a fixed deployment heals.
 */
export async function checkReference(
  store: (() => PayloadStore) | undefined,
  reference: ReferenceClaim,
  timeoutMs: number,
): Promise<StatResult> {
  if (store === undefined)
    throw new Error(
      `cannot check the claim-check reference ${reference.uri}: this relay has no payload store (wiring.ts passes runtime.payloadStore)`,
    );
  return withDeadline(`the stat of ${reference.uri}`, timeoutMs, () => store().stat(reference));
}

/** The relay outcome of a document whose checked reference is MISSING or CHANGED, or null (no reference, or FOUND). */
export function unavailableReference(
  doc: { readonly reference?: ReferenceClaim | null },
  checks: ReferenceChecks,
): { readonly kind: 'REFERENCE_UNAVAILABLE'; readonly uri: string; readonly unavailable: Unavailable } | null {
  const reference = doc.reference ?? null;
  const checked = reference === null ? undefined : checks.get(reference.uri);
  if (reference === null || checked === undefined || checked.kind === 'FOUND') return null;
  return { kind: 'REFERENCE_UNAVAILABLE', uri: reference.uri, unavailable: checked };
}
