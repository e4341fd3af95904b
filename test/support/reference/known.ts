/**
 * The differences between our engine and bpmn-engine that the differential
 * test tolerates, each recognised by the shape of the model and of the run,
 * with its reason. Kinds (docs/bpmn-coverage.md has the semantics):
 *
 * - B: a defect or quirk of bpmn-engine (bpmn-elements 17);
 * - C: a deliberate semantic difference of ours (Camunda 8's semantics);
 * - A: a defect of ours, listed only while it is being fixed, as a TODO
 *   named for the issue's defect number, so that the test keeps passing for
 *   everything else; remove the entry with the fix, and the test proves it.
 *
 * Any other difference fails the test with report.ts's account of it.
 */
import type { RunResult } from './compare';
import { OUR_DIFFERENCES } from './known-ours';
import { REFERENCE_QUIRKS } from './known-reference';
import type { KnownDifference } from './run-queries';

export type { KnownDifference } from './run-queries';

/** The order entries are tried in: the narrowest shape first, the broadest last. */
const ORDER: readonly string[] = [
  'error-event-subprocess-ignores-job-errors',
  'catch-all-never-catches',
  'event-subprocess-already-running',
  'event-subprocess-never-interrupts',
  'catch-all-error-boundary-catches-incidents',
  'uncaught-error-end-event',
  'escalation-boundary-catches-outside-throw',
  'escalation-thrower-goes-on-after-interrupting-catch',
  'every-matching-catcher-runs',
  'join-counts-discarded-flow',
  'terminate-leaves-called-process-running',
  'terminate-ends-the-step-elsewhere',
  'failure-stops-whole-instance',
  'completion-condition-fails',
  'interrupted-call-activity-never-ends',
  'error-boundary-misses-inside-event-subprocess',
];

const byOrder = (a: KnownDifference, b: KnownDifference): number => ORDER.indexOf(a.id) - ORDER.indexOf(b.id);

export const KNOWN: readonly KnownDifference[] = [...OUR_DIFFERENCES, ...REFERENCE_QUIRKS].sort(byOrder);

// A new entry takes its place in ORDER (a removed one may leave its id there: it matches nothing).
for (const known of KNOWN)
  if (!ORDER.includes(known.id)) throw new Error(`known difference ${known.id} has no place in known.ts's ORDER`);

/** The first entry (the list runs from the narrowest shape to the broadest) that explains the run's difference, or null. */
export function explain(result: RunResult): KnownDifference | null {
  return KNOWN.find((k) => (k.explains ?? 'difference') === 'difference' && k.matches(result)) ?? null;
}

/** The entry that explains the run's inconsistency of ours (an INCONSISTENT detail), or null. */
export function explainInconsistency(result: RunResult): KnownDifference | null {
  return KNOWN.find((k) => k.explains === 'inconsistency' && k.matches(result)) ?? null;
}
