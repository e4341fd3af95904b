/**
 * The smallest model of each known difference (known.ts), with the moves
 * that show it: the unit suite checks that each still happens and is still
 * recognised by its own entry, so an entry never outlives its cause (a fix
 * of ours, a new bpmn-engine) and a recogniser never goes blind.
 */
import type { Choice } from './outcome';
import { type Block, type Branch, type Ending, type Flag, FLAGS, NONE, seq, type Shape } from './shapes';

export interface KnownCase {
  readonly id: string;
  readonly shape: Shape;
  readonly moves: readonly Choice[];
  /** Runs through our store only (a call or multi-instance activity): test/engine/reference-engine-store.test.ts checks it. */
  readonly store?: true;
}

const user: Block = { kind: 'user', boundaries: [] };
const job: Block = { kind: 'job', boundaries: [] };
const pass: Block = { kind: 'pass' };
const E1: Ending = { kind: 'error', code: 'E1' };
const off = Object.fromEntries(FLAGS.map((f) => [f, false])) as Record<Flag, boolean>;
const shape = (body: Block, more: Partial<Shape> = {}): Shape => ({
  body,
  ending: NONE,
  handlers: [],
  start: off,
  origin: 'known-case',
  ...more,
});
const branch = (body: Block, when: Flag | null = null, ending: Ending | null = null): Branch => ({
  when,
  body,
  ending,
});
const move = (pick = 0, error: string | null = null): Choice => ({ pick, vars: {}, error });

export const KNOWN_CASES: readonly KnownCase[] = [
  {
    id: 'error-event-subprocess-ignores-job-errors',
    shape: shape(job, { handlers: [{ kind: 'error', code: 'E1', body: seq(pass), ending: NONE }] }),
    moves: [move(0, 'E1')],
  },
  {
    id: 'catch-all-never-catches',
    shape: shape(seq({ kind: 'escalate', code: 'C1' }, user), {
      handlers: [{ kind: 'escalation', code: null, interrupting: false, body: seq(pass), ending: NONE }],
    }),
    moves: [],
  },
  {
    // Defect 1b's shape: the handler throws what it catches.
    id: 'event-subprocess-already-running',
    shape: shape(seq({ kind: 'escalate', code: 'C1' }, user), {
      handlers: [
        {
          kind: 'escalation',
          code: 'C1',
          interrupting: false,
          body: seq({ kind: 'escalate', code: 'C1' }),
          ending: NONE,
        },
      ],
    }),
    moves: [],
  },
  {
    id: 'event-subprocess-never-interrupts',
    shape: shape(
      { kind: 'and', branches: [branch(user), branch(pass, null, E1)] },
      {
        handlers: [{ kind: 'error', code: 'E1', body: seq(pass), ending: NONE }],
      },
    ),
    moves: [],
  },
  { id: 'uncaught-error-end-event', shape: shape(pass, { ending: E1 }), moves: [] },
  {
    id: 'escalation-boundary-catches-outside-throw',
    shape: shape({
      kind: 'sub',
      body: user,
      ending: NONE,
      handlers: [],
      boundaries: [
        { kind: 'timer', interrupting: false, then: seq({ kind: 'escalate', code: 'C1' }), to: 'end', ending: NONE },
        { kind: 'escalation', code: 'C1', interrupting: false, then: seq(pass), to: 'end', ending: NONE },
      ],
    }),
    moves: [move(0)],
  },
  {
    id: 'escalation-thrower-goes-on-after-interrupting-catch',
    shape: shape({
      kind: 'sub',
      body: seq({ kind: 'escalate', code: 'C1' }, pass),
      ending: NONE,
      handlers: [],
      boundaries: [{ kind: 'escalation', code: 'C1', interrupting: true, then: seq(), to: 'end', ending: NONE }],
    }),
    moves: [],
  },
  {
    id: 'every-matching-catcher-runs',
    shape: shape({
      kind: 'job',
      boundaries: [
        { kind: 'error', code: null, then: seq(), to: 'end', ending: NONE },
        { kind: 'error', code: 'E1', then: seq(), to: 'end', ending: NONE },
      ],
    }),
    moves: [move(0, 'E1')],
  },
  {
    // An interrupted subprocess: bpmn-engine discards the job, and the join inside counts the discard and goes on.
    id: 'join-counts-discarded-flow',
    shape: shape({
      kind: 'sub',
      body: { kind: 'and', branches: [branch(job), branch(pass)] },
      ending: NONE,
      handlers: [],
      boundaries: [{ kind: 'timer', interrupting: true, then: seq(), to: 'end', ending: NONE }],
    }),
    moves: [move(1)],
  },
  {
    id: 'terminate-ends-the-step-elsewhere',
    shape: shape({ kind: 'and', branches: [branch(pass, null, { kind: 'terminate' }), branch(user)] }),
    moves: [],
  },
  {
    // After a user task, a choice with no way out in one branch, a user task in the other: bpmn-engine stops before the second.
    id: 'failure-stops-whole-instance',
    shape: shape(
      seq(user, {
        kind: 'and',
        branches: [
          branch({ kind: 'xor', branches: [branch(pass, 'f0'), branch(pass, 'f1')], otherwise: null }),
          branch(user),
        ],
      }),
    ),
    moves: [move()],
  },
  {
    // Defect 2's shape: the condition reads a variable no item sets.
    id: 'completion-condition-fails',
    shape: shape(
      seq({
        kind: 'mi',
        activity: 'user',
        body: seq(),
        sequential: true,
        count: 2,
        completion: 'missing',
        boundaries: [],
      }),
    ),
    moves: [move()],
    store: true,
  },
  {
    // A call activity whose child waits, interrupted by its timer.
    id: 'interrupted-call-activity-never-ends',
    shape: shape({
      kind: 'call',
      callee: user,
      boundaries: [{ kind: 'timer', interrupting: true, then: seq(), to: 'end', ending: NONE }],
    }),
    moves: [move(0)],
    store: true,
  },
  {
    // A choice with no way out inside a subprocess that has a catch-all error boundary event.
    id: 'catch-all-error-boundary-catches-incidents',
    shape: shape({
      kind: 'sub',
      body: { kind: 'xor', branches: [branch(pass, 'f0'), branch(pass, 'f1')], otherwise: null },
      ending: NONE,
      handlers: [],
      boundaries: [{ kind: 'error', code: null, then: seq(pass), to: 'end', ending: NONE }],
    }),
    moves: [],
  },
  {
    // A terminate end event beside a call activity whose called process waits.
    id: 'terminate-leaves-called-process-running',
    shape: shape({
      kind: 'and',
      branches: [branch({ kind: 'call', callee: user, boundaries: [] }), branch(pass, null, { kind: 'terminate' })],
    }),
    moves: [],
    store: true,
  },
  {
    // An escalation starts an event subprocess whose subprocess throws an error its own boundary event catches.
    id: 'error-boundary-misses-inside-event-subprocess',
    shape: shape(seq({ kind: 'escalate', code: 'C1' }, user), {
      handlers: [
        {
          kind: 'escalation',
          code: 'C1',
          interrupting: false,
          body: {
            kind: 'sub',
            body: pass,
            ending: E1,
            handlers: [],
            boundaries: [{ kind: 'error', code: 'E1', then: seq(), to: 'end', ending: NONE }],
          },
          ending: NONE,
        },
      ],
    }),
    moves: [],
  },
];
