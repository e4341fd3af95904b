/**
 * A drawn model: elements with ids, each in its scope (a process, or the
 * subprocess it is drawn in), and sequence flows with their conditions.
 * draw.ts makes one from a Shape; xml.ts writes it for each engine; known.ts
 * reads it to recognise a difference by its shape.
 */
import type { Completion, Flag } from './shapes';

/** The process every model starts in; a call activity's callee is a process of its own (`callee4`). */
export const MAIN_PROCESS = 'p';

export type NodeKind =
  | 'start'
  | 'end'
  | 'errorEnd'
  | 'terminateEnd'
  | 'escalationEnd'
  | 'user'
  | 'job'
  | 'pass'
  | 'timer'
  | 'escalate'
  | 'xor'
  | 'or'
  /** An inclusive join: an inclusiveGateway for us, a parallelGateway for bpmn-engine (xml.ts says why). */
  | 'orJoin'
  | 'and'
  | 'sub'
  /** A call activity (`calls` names the process). */
  | 'call'
  /** An event subprocess; its start event is an `espStart` inside it. */
  | 'esp'
  | 'espStart'
  | 'boundaryError'
  | 'boundaryTimer'
  | 'boundaryEscalation';

export interface GraphNode {
  readonly id: string;
  readonly kind: NodeKind;
  /** The subprocess or event subprocess it is drawn in; null at the process level. */
  readonly scope: string | null;
  /** An error or escalation code (null: a catch-all). */
  readonly code?: string | null;
  readonly interrupting?: boolean;
  readonly attachedTo?: string;
  /** An event subprocess start: what starts it. */
  readonly trigger?: 'error' | 'escalation';
  /** A parallel or inclusive join, or an exclusive choice's merge: the split that opens its block. */
  readonly pair?: string;
  /** An exclusive gateway that merges a block's paths (a choice's branches, an activity and its boundary events' paths), not a loop's entry. */
  readonly merge?: true;
  /** The process it is drawn in: {@link MAIN_PROCESS} or a callee's. */
  readonly process: string;
  /** A call activity: the process it calls. */
  readonly calls?: string;
  /** A multi-instance activity's characteristics. */
  readonly loop?: { readonly sequential: boolean; readonly count: number; readonly completion: Completion | null };
  /** A gateway's default flow. */
  defaultFlow?: string;
}

export interface GraphFlow {
  readonly id: string;
  readonly source: string;
  readonly target: string;
  readonly when: Flag | null;
}

export interface Graph {
  readonly nodes: readonly GraphNode[];
  readonly flows: readonly GraphFlow[];
  /** The processes call activities call, besides {@link MAIN_PROCESS}. */
  readonly callees: readonly string[];
  /**
   * Elements whose waits belong to a multi-instance activity's item or a
   * called instance: completing them sets no process variable (our items and
   * called instances hold copies of the variables, bpmn-engine's share them).
   */
  readonly scoped: ReadonlySet<string>;
  readonly start: Readonly<Record<string, boolean>>;
  readonly origin: string;
}
