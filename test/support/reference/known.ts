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
import { MAIN_PROCESS } from './draw';
import {
  differingElements,
  extraPasses,
  isInside,
  nodes,
  oursIncident,
  passed,
  reaches,
  startOf,
  stalledJoins,
} from './run-queries';
import { multisetDiff } from './visits';

export interface KnownDifference {
  readonly id: string;
  readonly kind: 'A' | 'B' | 'C';
  /** What it explains: a difference between the engines (the default), or an inconsistency of ours alone. */
  readonly explains?: 'difference' | 'inconsistency';
  /** One line: why the engines differ here. */
  readonly reason: string;
  readonly matches: (result: RunResult) => boolean;
}

export const KNOWN: readonly KnownDifference[] = [
  {
    id: 'TODO(defect-7): parallel items that never wait stop starting once the completion condition holds',
    kind: 'A',
    reason:
      'to be decided with defect 7: a parallel multi-instance activity starts all its items at once (up to 100, docs/bpmn-coverage.md), but an item that never waits ends inside its own start, the completion condition is checked then, and once it holds the store does not start the items still queued in that step (startIfAwaited), so they never run; bpmn-engine (and Camunda 8, which activates every item first) runs them',
    matches: (r) => {
      const { onlyA, onlyB } = extraPasses(r);
      const parallelWithCondition = r.graph.nodes.filter(
        (n) => n.kind === 'sub' && n.loop !== undefined && !n.loop.sequential && n.loop.completion !== null,
      );
      return (
        onlyA.length === 0 &&
        onlyB.length > 0 &&
        onlyB.every((e) => parallelWithCondition.some((mi) => isInside(r, e, mi.id)))
      );
    },
  },
  {
    id: 'error-event-subprocess-ignores-job-errors',
    kind: 'B',
    reason:
      'bpmn-engine’s error event subprocess starts on an error end event’s throw only; a service task that fails with a BPMN error fails the instance (an error boundary event does catch it); we catch a job’s BPMN error in the error event subprocess of its scope',
    matches: (r) => {
      const ours = passed(r, 'ours');
      const failedJob = r.reference?.end.failedAt.some((at) => at.startsWith('job')) === true;
      return failedJob && nodes(r, 'esp').some((esp) => ours.has(esp.id) && startOf(r, esp.id)?.trigger === 'error');
    },
  },
  {
    id: 'catch-all-never-catches',
    kind: 'B',
    reason:
      'bpmn-engine never starts an event subprocess whose start event names no error or escalation, nor takes an escalation boundary event that names none (catch-alls; its catch-all error boundary event works); we catch every code there, as Camunda 8 does',
    matches: (r) => {
      const ours = passed(r, 'ours');
      return (
        nodes(r, 'esp').some((esp) => ours.has(esp.id) && startOf(r, esp.id)?.code === null) ||
        nodes(r, 'boundaryEscalation').some((b) => ours.has(b.id) && b.code === null)
      );
    },
  },
  {
    id: 'event-subprocess-already-running',
    kind: 'B',
    reason:
      'bpmn-engine fails the instance ("activity <id> is already running") when an event subprocess is triggered while it runs (a second escalation, or its own body’s throw); we run each trigger in a token of its own and never let a handler catch its own throw',
    matches: (r) => (r.reference?.end.detail ?? []).some((d) => /activity <\w+> is already running/.test(d)),
  },
  {
    id: 'event-subprocess-never-interrupts',
    kind: 'B',
    reason:
      'bpmn-engine runs an interrupting event subprocess (an error start; an escalation start without isInterrupting="false") beside the rest of its scope and lets the thrower go on; BPMN, Camunda 8 and we end the scope’s other work first',
    matches: (r) => {
      const ours = passed(r, 'ours');
      return nodes(r, 'esp').some((esp) => esp.interrupting === true && ours.has(esp.id));
    },
  },
  {
    id: 'catch-all-error-boundary-catches-incidents',
    kind: 'B',
    reason:
      'bpmn-engine (not in strict mode, which would also stop it catching a service’s error) lets an error boundary event without errorRef catch any failure inside its activity, an exclusive gateway with no flow to take included; for us that is a NO_MATCHING_FLOW incident, not a BPMN error, and nothing catches it (Camunda 8 alike)',
    matches: (r) => {
      const ref = passed(r, 'reference');
      const stuck = oursIncident(r, 'NO_MATCHING_FLOW');
      return nodes(r, 'boundaryError').some(
        (b) =>
          b.code === null &&
          ref.has(b.id) &&
          stuck.some((at) => at === b.attachedTo || isInside(r, at, b.attachedTo ?? '')),
      );
    },
  },
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
    id: 'escalation-boundary-catches-outside-throw',
    kind: 'B',
    reason:
      'bpmn-engine’s escalation boundary event on a subprocess catches an escalation thrown outside the subprocess while it runs (by a boundary event’s path, by another branch); BPMN, Camunda 8 and we catch only what is thrown inside it',
    matches: (r) => {
      const differ = differingElements(r);
      const ref = passed(r, 'reference');
      return nodes(r, 'boundaryEscalation').some(
        (b) =>
          differ.has(b.id) &&
          nodes(r, 'escalate', 'escalationEnd').some((t) => ref.has(t.id) && !isInside(r, t.id, b.attachedTo ?? '')),
      );
    },
  },
  {
    id: 'escalation-thrower-goes-on-after-interrupting-catch',
    kind: 'B',
    reason:
      'when an interrupting escalation boundary event on a subprocess catches an escalation thrown inside it, bpmn-engine lets the throwing token go on into what follows the throw event before it ends the subprocess; we end everything in the subprocess first (BPMN, Camunda 8)',
    matches: (r) => {
      const [ours, ref] = [passed(r, 'ours'), passed(r, 'reference')];
      const { onlyA, onlyB } = extraPasses(r);
      return nodes(r, 'boundaryEscalation').some(
        (b) =>
          b.interrupting === true &&
          ours.has(b.id) &&
          ref.has(b.id) &&
          onlyA.length === 0 &&
          onlyB.length > 0 &&
          onlyB.every((e) => isInside(r, e, b.attachedTo ?? '')),
      );
    },
  },
  {
    id: 'every-matching-catcher-runs',
    kind: 'B',
    reason:
      'bpmn-engine runs every catcher that matches an error or escalation: each matching error boundary event on an activity (two catch-alls, a catch-all beside the exact code), each matching event subprocess of a scope, and an event subprocess of an outer scope even when a boundary event nearer the throw caught it; BPMN, Camunda 8 and we run one, the nearest: the exact code before a catch-all, else the first drawn',
    matches: (r) => {
      const [ours, ref] = [passed(r, 'ours'), passed(r, 'reference')];
      const count = new Map<string, number>();
      const add = (key: string) => count.set(key, (count.get(key) ?? 0) + 1);
      for (const b of nodes(r, 'boundaryError')) if (ref.has(b.id)) add(`on ${b.attachedTo ?? ''}`);
      for (const esp of nodes(r, 'esp'))
        if (ref.has(esp.id)) add(`in ${esp.scope ?? 'process'} for ${startOf(r, esp.id)?.trigger ?? ''}`);
      if ([...count.values()].some((n) => n > 1)) return true;
      // An outer event subprocess only bpmn-engine ran, beside a boundary event of the same kind that caught too.
      return nodes(r, 'esp').some((esp) => {
        const trigger = startOf(r, esp.id)?.trigger;
        if (!ref.has(esp.id) || ours.has(esp.id) || trigger === undefined) return false;
        const kind = trigger === 'error' ? 'boundaryError' : 'boundaryEscalation';
        return nodes(r, kind).some((b) => ref.has(b.id));
      });
    },
  },
  {
    id: 'join-counts-discarded-flow',
    kind: 'B',
    reason:
      'bpmn-engine’s parallel join (which also stands for our inclusive join and exclusive merge, xml.ts) counts a flow its dead-path elimination discarded as arrived: a discard that did not start at the block’s own split (an interrupted subprocess’s or a thrown error’s discarded activities, a loop going round, a merge before the fork) completes the join without that branch’s token, or a late one starts a join round that never completes (its documented "join edge case"); ours waits for the token',
    matches: (r) => {
      const counted = (r.reference?.notes ?? []).some((note) => {
        const m = /^discard into (\S+) from (\S*)$/.exec(note);
        const join = m === null ? undefined : r.graph.nodes.find((n) => n.id === m[1]);
        if (m === null || join === undefined) return false;
        return join.kind === 'and' || join.pair === undefined || !(m[2] ?? '').split('>').includes(join.pair);
      });
      return (
        counted || [...stalledJoins(r)].some((id) => r.graph.nodes.some((n) => n.id === id && n.pair !== undefined))
      );
    },
  },
  {
    id: 'terminate-leaves-called-process-running',
    kind: 'B',
    reason:
      'a terminate end event ends bpmn-engine’s process, but not the process a call activity of it called: that one goes on waiting (and can be completed); we terminate the called instance with its caller, as Camunda 8 does',
    matches: (r) => {
      const ref = passed(r, 'reference');
      const terminated = nodes(r, 'terminateEnd').some((t) => t.process === MAIN_PROCESS && ref.has(t.id));
      const waits = [...(r.reference?.end.waits ?? [])].map((w) => w.slice(w.indexOf(':') + 1));
      const inCallee = (id: string) => r.graph.nodes.some((n) => n.id === id && n.process !== MAIN_PROCESS);
      return terminated && waits.length > 0 && waits.every(inCallee) && (r.ours?.end.waits.length ?? 0) === 0;
    },
  },
  {
    id: 'terminate-ends-the-step-elsewhere',
    kind: 'B',
    reason:
      'which elements still run in the step in which a terminate end event ends the instance depends on the order each engine runs that step’s work: we cancel everything still queued at once (the other branches of a fork, a subprocess about to be left); bpmn-engine runs what it has already reached (a user task starts, then stops), and sends a choice’s discards, which its joins (our merges, xml.ts) wait for, only after the taken branch has run, so the instance may end before a merge is passed',
    matches: (r) => {
      const [ours, ref] = [passed(r, 'ours'), passed(r, 'reference')];
      if (r.ours?.end.status !== r.reference?.end.status) return false;
      if (!nodes(r, 'terminateEnd').some((t) => ours.has(t.id) && ref.has(t.id))) return false;
      const { onlyA, onlyB } = extraPasses(r);
      const merges = new Set(
        r.graph.nodes.filter((n) => (n.kind === 'xor' && n.merge === true) || n.kind === 'orJoin').map((n) => n.id),
      );
      const waited = onlyA.filter((e) => merges.has(e));
      // bpmn-engine may run more of that step (onlyB); we pass more only beyond a merge it waited at.
      return onlyA.length + onlyB.length > 0 && onlyA.every((e) => waited.some((m) => reaches(r, m, e)));
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
  {
    id: 'interrupted-call-activity-never-ends',
    kind: 'B',
    reason:
      'when an interrupting boundary event takes the token off a call activity, bpmn-engine stops the called process but leaves the call activity running: its scope (the instance, the subprocess) never completes; we terminate the called instance and leave the call activity (BPMN, Camunda 8)',
    matches: (r) => {
      const [ours, ref] = [passed(r, 'ours'), passed(r, 'reference')];
      const stalled = stalledJoins(r);
      return r.graph.nodes.some(
        (b) =>
          b.interrupting === true &&
          b.attachedTo !== undefined &&
          nodes(r, 'call').some((c) => c.id === b.attachedTo && stalled.has(c.id)) &&
          ours.has(b.id) &&
          ref.has(b.id),
      );
    },
  },
];

/** The first entry (the list runs from the narrowest shape to the broadest) that explains the run's difference, or null. */
export function explain(result: RunResult): KnownDifference | null {
  return KNOWN.find((k) => (k.explains ?? 'difference') === 'difference' && k.matches(result)) ?? null;
}

/** The entry that explains the run's inconsistency of ours (an INCONSISTENT detail), or null. */
export function explainInconsistency(result: RunResult): KnownDifference | null {
  return KNOWN.find((k) => k.explains === 'inconsistency' && k.matches(result)) ?? null;
}
