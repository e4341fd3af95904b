/**
 * What a repair acts on, as its transaction read it: the basis a preview
 * shows and its confirmation sends back. A repair given the basis of its
 * preview (`expect`) refuses when what it reads now differs, so Confirm
 * never does something other than what was previewed: a token that moved
 * on since, a new incident, a document requeued and parked again. Pure, like
 * the rest of the core; plain strings only, so the CLI can print it and take
 * it back (`--expect`) and the console can send it as JSON.
 */
import type { ExecutionState, InstanceState } from './state';
import { isOpenIncident } from './state';

/** What the basis describes: one token, an instance (its tokens, or its incidents), an inbox document, or a stored process version. */
export type BasisSubject = 'token' | 'tokens' | 'incidents' | 'document' | 'version';

/**
 * The facts a repair's checks read, by name, in a fixed order. Values are
 * ids, statuses, counts and lists of them: no `;` or `=` (BPMN ids are XML
 * names), so {@link formatBasis} is unambiguous.
 */
export interface RepairBasis {
  readonly subject: BasisSubject;
  readonly facts: Readonly<Record<string, string>>;
}

/** The token a move or cancel acts on: where it stands, at which step, in which state. */
export function tokenBasis(execution: ExecutionState): RepairBasis {
  return {
    subject: 'token',
    facts: { at: execution.activityId, step: String(execution.step), status: execution.status },
  };
}

/**
 * An instance a new token is added to: its status and its live tokens
 * (`id@activity#step`, sorted). A token that moved or ended since is a
 * different instance than the one previewed.
 */
export function tokensBasis(instance: InstanceState, tokens: Readonly<Record<string, ExecutionState>>): RepairBasis {
  const live = instance.activeExecutionIds
    .map((id) => tokens[id])
    .filter((e): e is ExecutionState => e !== undefined)
    .map((e) => `${e.id}@${e.activityId}#${e.step}`)
    .sort();
  return { subject: 'tokens', facts: { status: instance.status, tokens: live.join(',') } };
}

/** The incidents a resolve closes: the instance's status and its open incidents (`reason@activity`, in the order raised). */
export function incidentsBasis(instance: InstanceState): RepairBasis {
  const open = instance.incidents.filter(isOpenIncident).map((i) => `${i.reason}@${i.activityId}`);
  return { subject: 'incidents', facts: { status: instance.status, open: open.join(',') } };
}

/** An inbox document a requeue or park acts on: its status and park reason. */
export function documentBasis(
  doc: { readonly status: string; readonly reason: string | null } | undefined,
): RepairBasis {
  return {
    subject: 'document',
    facts: doc === undefined ? { status: 'ABSENT', reason: '' } : { status: doc.status, reason: doc.reason ?? '' },
  };
}

/**
 * A stored process version a retire deletes: which one, when it was first
 * stored (a version retired and stored again is another document), and how
 * many live instances and items of it the queries before the transaction
 * found (a transaction reads by id, never queries: the delete is held to
 * what they found).
 */
export function versionBasis(
  processKey: string,
  version: string,
  firstDeployedAt: Date | null,
  live: number,
): RepairBasis {
  return {
    subject: 'version',
    facts: { process: processKey, version, since: firstDeployedAt?.toISOString() ?? '', live: String(live) },
  };
}

/** Whether two bases describe the same state (the same subject and the same facts). */
export function sameBasis(a: RepairBasis, b: RepairBasis): boolean {
  const keys = new Set([...Object.keys(a.facts), ...Object.keys(b.facts)]);
  return a.subject === b.subject && [...keys].every((k) => a.facts[k] === b.facts[k]);
}

/** The basis as one line: `token:at=waitForCompletion;step=3;status=WAITING_MESSAGE` (what the CLI's `--expect` takes). */
export function formatBasis(basis: RepairBasis): string {
  return `${basis.subject}:${Object.entries(basis.facts)
    .map(([k, v]) => `${k}=${v}`)
    .join(';')}`;
}

const SUBJECTS: readonly BasisSubject[] = ['token', 'tokens', 'incidents', 'document', 'version'];

/** A line of {@link formatBasis} read back; null for text no basis gave. */
export function parseBasis(text: string): RepairBasis | null {
  const colon = text.indexOf(':');
  const subject = text.slice(0, colon) as BasisSubject;
  if (colon < 0 || !SUBJECTS.includes(subject)) return null;
  const facts: Record<string, string> = {};
  for (const pair of text.slice(colon + 1).split(';')) {
    const eq = pair.indexOf('=');
    const key = pair.slice(0, eq);
    if (eq <= 0 || !/^[a-z]+$/.test(key) || Object.hasOwn(facts, key)) return null;
    facts[key] = pair.slice(eq + 1);
  }
  return { subject, facts };
}

/**
 * A repair refused because what it acts on changed since its preview:
 * nothing was changed. `then` is the preview's basis, `now` what the repair
 * read; the message says both, and to preview again.
 */
export class BasisChangedError extends Error {
  override readonly name = 'BasisChangedError';
  constructor(
    readonly then: RepairBasis,
    readonly now: RepairBasis,
    what: string,
  ) {
    super(
      `refused: ${what} changed since the preview (then ${describeFacts(then)}; now ${describeFacts(now)}): nothing was done; preview again to see what a repair would do now`,
    );
  }
}

/** The facts as a person reads them: `at waitForCompletion, step 3, WAITING_MESSAGE`. */
export function describeFacts(basis: RepairBasis): string {
  const parts = Object.entries(basis.facts).map(([k, v]) => (k === 'status' ? v : `${k} ${v === '' ? '(none)' : v}`));
  return parts.join(', ');
}

/**
 * Refuses ({@link BasisChangedError}) when `expect`, the preview's basis,
 * differs from `now`, what the repair reads in its transaction; no `expect`
 * (a run without a preview): nothing to compare, the repair reads and acts
 * in one transaction.
 */
export function checkBasis(expect: RepairBasis | undefined, now: RepairBasis, what: string): void {
  if (expect !== undefined && !sameBasis(expect, now)) throw new BasisChangedError(expect, now, what);
}
