/**
 * Differences that are bpmn-engine's (bpmn-elements 17): its defects and
 * quirks, each with the smallest model that shows it in known-cases.ts.
 */
import { MAIN_PROCESS } from './graph';
import {
  type KnownDifference,
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

export const REFERENCE_QUIRKS: readonly KnownDifference[] = [
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
  {
    id: 'error-boundary-misses-inside-event-subprocess',
    kind: 'B',
    reason:
      'inside an event subprocess that a throw started, bpmn-engine lets an error end event escape the error boundary event of the subprocess it is thrown in (the subprocess ends as if normally): it handles the new throw while still passing on the first; we catch it there',
    matches: (r) => {
      const [ours, ref] = [passed(r, 'ours'), passed(r, 'reference')];
      return nodes(r, 'boundaryError').some(
        (b) =>
          ours.has(b.id) &&
          !ref.has(b.id) &&
          nodes(r, 'esp').some((esp) => ref.has(esp.id) && isInside(r, b.attachedTo ?? '', esp.id)),
      );
    },
  },
];
