/**
 * The models the differential test generates, before they are drawn: a
 * block-structured process (every fork has its join, every branch of an
 * exclusive choice its merge), so that both engines can run it and no
 * element is ever reached by two tokens at once (bpmn-engine queues a
 * second token at a running activity; we do not). Loops, boundary events
 * and event subprocesses hang off the blocks. draw.ts turns a Shape into
 * elements and flows with ids.
 */

/** A process variable both engines read as a boolean: `f0` … `f3`. */
export type Flag = `f${number}`;

/** The BPMN error codes and escalation codes a model may use. */
export const ERROR_CODES = ['E1', 'E2'] as const;
export const ESCALATION_CODES = ['C1', 'C2'] as const;
export const FLAGS: readonly Flag[] = ['f0', 'f1', 'f2', 'f3'];

export type ErrorCode = (typeof ERROR_CODES)[number];
export type EscalationCode = (typeof ESCALATION_CODES)[number];

/** How a path ends: a none end event, an error end event, a terminate end event, an escalation end event. */
export type Ending =
  | { readonly kind: 'none' }
  | { readonly kind: 'error'; readonly code: ErrorCode }
  | { readonly kind: 'terminate' }
  | { readonly kind: 'escalation'; readonly code: EscalationCode };

/**
 * A boundary event on a task or a subprocess. Its path either ends on its
 * own (`then` then an end event), rejoins the activity's successor through
 * an exclusive merge (interrupting only: one of the two paths goes on), or
 * leads back into the activity it is attached to (`back`: defect shape 1).
 */
export type Boundary =
  | {
      readonly kind: 'error';
      /** null: catches every code. */
      readonly code: ErrorCode | null;
      readonly then: Block;
      readonly to: 'end' | 'rejoin' | 'back';
      readonly ending: Ending;
    }
  | {
      readonly kind: 'timer';
      readonly interrupting: boolean;
      readonly then: Block;
      readonly to: 'end' | 'rejoin';
      readonly ending: Ending;
    }
  | {
      readonly kind: 'escalation';
      readonly code: EscalationCode | null;
      readonly interrupting: boolean;
      readonly then: Block;
      readonly to: 'end' | 'rejoin';
      readonly ending: Ending;
    };

/** An event subprocess drawn in a scope (the process or a subprocess). */
export type Handler =
  | { readonly kind: 'error'; readonly code: ErrorCode | null; readonly body: Block; readonly ending: Ending }
  | {
      readonly kind: 'escalation';
      readonly code: EscalationCode | null;
      readonly interrupting: boolean;
      readonly body: Block;
      readonly ending: Ending;
    };

/** One branch of an exclusive or inclusive choice: taken when its flag is true (null: no condition, or the default). */
export interface Branch {
  readonly when: Flag | null;
  readonly body: Block;
  /** The branch ends the path inside the block instead of reaching the merge. */
  readonly ending: Ending | null;
}

/**
 * A multi-instance activity's completion condition: the item that just ended
 * returned `done` true (a user task's or a job's item); at least two items
 * ended (sequential, or items that never wait, which end in item order); or
 * a variable no item sets (defect 2's shape: FEEL fails on it for us).
 */
export type Completion = 'done' | 'second' | 'missing';

export type Block =
  | { readonly kind: 'seq'; readonly items: readonly Block[] }
  /** bpmn:task: passed through. */
  | { readonly kind: 'pass' }
  /** A user task (a person completes it) with timer boundary events. */
  | { readonly kind: 'user'; readonly boundaries: readonly Boundary[] }
  /** An async service task (a job, which completes or throws a BPMN error) with error and timer boundary events. */
  | { readonly kind: 'job'; readonly boundaries: readonly Boundary[] }
  /** An intermediate timer catch event. */
  | { readonly kind: 'timer' }
  /** An escalation intermediate throw event. */
  | { readonly kind: 'escalate'; readonly code: EscalationCode }
  /** An exclusive choice and its merge; `otherwise`: the index of the default branch (no condition), or null. */
  | { readonly kind: 'xor'; readonly branches: readonly Branch[]; readonly otherwise: number | null }
  /** An inclusive choice and its join. */
  | { readonly kind: 'or'; readonly branches: readonly Branch[]; readonly otherwise: number | null }
  /** A parallel fork and its join. */
  | { readonly kind: 'and'; readonly branches: readonly Branch[] }
  /** A loop: an exclusive merge, the body, an exclusive split back to the merge while `again` holds. */
  | { readonly kind: 'loop'; readonly body: Block; readonly again: Flag }
  /** A call activity: the process it calls runs `callee` (a process of its own); timer boundary events on it. */
  | { readonly kind: 'call'; readonly callee: Block; readonly boundaries: readonly Boundary[] }
  /**
   * A multi-instance activity over `count` items: a user task, a job, a task
   * (its items never wait) or a subprocess running `body`; timer boundary events on it.
   */
  | {
      readonly kind: 'mi';
      readonly activity: 'user' | 'job' | 'pass' | 'sub';
      readonly body: Block;
      readonly sequential: boolean;
      readonly count: number;
      readonly completion: Completion | null;
      readonly boundaries: readonly Boundary[];
    }
  /** An embedded subprocess with its boundary events and event subprocesses. */
  | {
      readonly kind: 'sub';
      readonly body: Block;
      readonly ending: Ending;
      readonly boundaries: readonly Boundary[];
      readonly handlers: readonly Handler[];
    };

/** A whole process: a start event, the body, an ending; event subprocesses drawn at the process level. */
export interface Shape {
  readonly body: Block;
  readonly ending: Ending;
  readonly handlers: readonly Handler[];
  /** The start variables: every flag. */
  readonly start: Readonly<Record<Flag, boolean>>;
  /** Which generator made it: `random`, or the defect shape it draws (`defect-1a`, …). */
  readonly origin: string;
}

export const seq = (...items: Block[]): Block => ({ kind: 'seq', items });
export const NONE: Ending = { kind: 'none' };
