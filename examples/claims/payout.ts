/**
 * What "Pay out" pays, from the instance's variables (pure): the claimed
 * amount when the gateway approved the claim automatically, the reviewer's
 * approved amount (or the claimed one) when a review approved it.
 */

/** A payout the variables allow: how much, in which currency, approved by whom. */
export interface Payout {
  readonly claimId: string;
  readonly amountCents: number;
  readonly currency: string;
  /** `AUTOMATIC` (below the model's approval limit) or the reviewer's id. */
  readonly approvedBy: string;
}

/** Why the variables allow no payout, for good: the job fails at once (PermanentJobError). */
export interface PayoutProblem {
  readonly problem: string;
}

const stringOf = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);
const centsOf = (value: unknown): number | null =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;

/** The claim's id: its `claimId` variable, else the business key (a claim's instance is keyed by it). */
export function claimIdOf(variables: Readonly<Record<string, unknown>>, businessKey: string): string {
  return stringOf(variables['claimId']) ?? businessKey;
}

/**
 * The payout of a claim, or why there is none: no claimed amount or
 * currency, a review that did not approve (the model never routes one
 * here), or an approved amount above the claimed one.
 */
export function payoutOf(variables: Readonly<Record<string, unknown>>, businessKey: string): Payout | PayoutProblem {
  const claimId = claimIdOf(variables, businessKey);
  const claimed = centsOf(variables['amountCents']);
  const currency = stringOf(variables['currency']);
  if (claimed === null || currency === null)
    return { problem: `claim ${claimId} has no claimed amount and currency to pay (amountCents, currency)` };
  const decision = variables['decision'];
  if (decision === undefined) return { claimId, amountCents: claimed, currency, approvedBy: 'AUTOMATIC' };
  if (decision !== 'APPROVED')
    return { problem: `claim ${claimId} was not approved (decision ${JSON.stringify(decision)}): nothing to pay` };
  const reviewer = stringOf(variables['reviewer']) ?? 'reviewer unknown';
  const approved = variables['approvedAmountCents'] === undefined ? claimed : centsOf(variables['approvedAmountCents']);
  if (approved === null)
    return {
      problem: `claim ${claimId}: the approved amount ${JSON.stringify(variables['approvedAmountCents'])} is no amount in cents`,
    };
  if (approved > claimed)
    return {
      problem: `claim ${claimId}: ${reviewer} approved ${approved} cents, more than the ${claimed} claimed; the review must be sent again`,
    };
  return { claimId, amountCents: approved, currency, approvedBy: reviewer };
}
