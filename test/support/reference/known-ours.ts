/**
 * Differences that are ours: deliberate ones (kind C, Camunda 8's
 * semantics, docs/bpmn-coverage.md) and defects being fixed (kind A, a TODO
 * named for the defect, removed with its fix), each with the smallest model
 * that shows it in known-cases.ts.
 */
import { type KnownDifference, nodes, oursIncident } from './run-queries';
import { multisetDiff } from './visits';

export const OUR_DIFFERENCES: readonly KnownDifference[] = [
  {
    id: 'uncaught-error-end-event',
    kind: 'C',
    reason:
      'an error end event whose code nothing catches is an UNCAUGHT_ERROR incident for us (as in Camunda 8); bpmn-engine ends the token as if the end event were a none end event, and its scope goes on',
    matches: (r) => {
      const errorEnds = new Set(nodes(r, 'errorEnd').map((n) => n.id));
      return oursIncident(r, 'UNCAUGHT_ERROR').some((at) => errorEnds.has(at));
    },
  },
  {
    id: 'failure-stops-whole-instance',
    kind: 'C',
    reason:
      'an incident stops the token that met it while the instance’s other tokens carry on (as in Camunda 8); bpmn-engine’s error ends the whole instance at once, so a branch it had not reached yet in that step never runs',
    matches: (r) => {
      const [ours, ref] = [r.ours, r.reference];
      if (ours === null || ref === null || ours.end.status !== 'failed' || ref.end.status !== 'failed') return false;
      // bpmn-engine stops at its first failure; ours may meet more on other branches.
      if (ref.end.failedAt.length === 0 || !ref.end.failedAt.every((at) => ours.end.failedAt.includes(at)))
        return false;
      // bpmn-engine did a part of what we did, nothing else.
      const elements = (s: typeof ours) => s.paths.flatMap((p) => p.split('>')).sort();
      return multisetDiff(elements(ref), elements(ours)).onlyA.length === 0;
    },
  },
  {
    id: 'completion-condition-fails',
    kind: 'C',
    reason:
      'a completion condition that reads a variable nothing sets (FEEL `=missing`) is an EXPRESSION_FAILED incident on the multi-instance activity for us, as in Camunda 8 (FEEL is evaluated strictly); bpmn-engine’s expression gives undefined, which is false, and the activity runs all its items',
    matches: (r) => {
      const failing = new Set(r.graph.nodes.filter((n) => n.loop?.completion === 'missing').map((n) => n.id));
      return oursIncident(r, 'EXPRESSION_FAILED').some((at) => failing.has(at));
    },
  },
];
