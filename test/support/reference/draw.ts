/**
 * A generated Shape drawn as a graph: elements with ids, each in its scope
 * (the process, or the subprocess it is drawn in), and sequence flows with
 * their conditions. Ids name the element's kind and a number (`user4`,
 * `xor7`), so a report reads like the model. xml.ts writes the graph as
 * BPMN XML, once for each engine.
 */
import type { Block, Boundary, Ending, Flag, Handler, Shape } from './shapes';

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
  readonly start: Readonly<Record<string, boolean>>;
  readonly origin: string;
}

/** Where a drawn block is entered, and the node the next flow leaves (null: the block ends every path). */
interface Drawn {
  readonly entry: string | null;
  readonly exit: string | null;
}

export function draw(shape: Shape): Graph {
  const nodes: GraphNode[] = [];
  const flows: GraphFlow[] = [];
  let count = 0;
  /** Exits whose next flow is their gateway's default (a loop's split leaves by its default flow). */
  const leavesByDefault = new Set<string>();

  const add = (kind: NodeKind, scope: string | null, fields: Partial<GraphNode> = {}): string => {
    count += 1;
    const id = `${kind === 'orJoin' ? 'orj' : kind === 'espStart' ? 'espstart' : kind}${count}`;
    nodes.push({ id, kind, scope, ...fields });
    return id;
  };
  const flow = (source: string, target: string, when: Flag | null = null, isDefault = false): string => {
    const id = `${source}-${target}${flows.some((f) => f.source === source && f.target === target) ? `-${count++}` : ''}`;
    flows.push({ id, source, target, when });
    const from = nodes.find((n) => n.id === source);
    if (from !== undefined && (isDefault || leavesByDefault.has(source))) {
      from.defaultFlow = id;
      leavesByDefault.delete(source);
    }
    return id;
  };
  /** A scope's start, its body and its ending (drawn only when the body leaves a path to it). */
  const close = (start: string, body: Drawn, end: Ending, scope: string | null): void => {
    if (body.entry === null) return void flow(start, ending(end, scope));
    flow(start, body.entry);
    if (body.exit !== null) flow(body.exit, ending(end, scope));
  };
  const ending = (e: Ending, scope: string | null): string => {
    switch (e.kind) {
      case 'none':
        return add('end', scope);
      case 'error':
        return add('errorEnd', scope, { code: e.code });
      case 'terminate':
        return add('terminateEnd', scope);
      case 'escalation':
        return add('escalationEnd', scope, { code: e.code });
    }
  };
  /** Draws a block in `scope`; returns where it is entered and the node its successor follows. */
  const block = (b: Block, scope: string | null): Drawn => {
    switch (b.kind) {
      case 'seq': {
        let entry: string | null = null;
        let exit: string | null = null;
        for (const item of b.items) {
          // The path ended before this item: nothing after it is drawn.
          if (entry !== null && exit === null) break;
          const drawn = block(item, scope);
          if (drawn.entry === null) continue;
          if (exit !== null) flow(exit, drawn.entry);
          entry ??= drawn.entry;
          exit = drawn.exit;
        }
        return { entry, exit };
      }
      case 'pass':
      case 'timer': {
        const id = add(b.kind, scope);
        return { entry: id, exit: id };
      }
      case 'escalate': {
        const id = add('escalate', scope, { code: b.code });
        return { entry: id, exit: id };
      }
      case 'user':
      case 'job': {
        const id = add(b.kind, scope);
        return { entry: id, exit: boundaries(id, b.boundaries, scope) };
      }
      case 'xor':
      case 'or':
      case 'and': {
        const split = add(b.kind, scope);
        const merge = add(b.kind === 'or' ? 'orJoin' : b.kind, scope, {
          pair: split,
          ...(b.kind === 'xor' ? { merge: true as const } : {}),
        });
        let reached = 0;
        b.branches.forEach((branch, i) => {
          const drawn = block(branch.body, scope);
          const isDefault = b.kind !== 'and' && b.otherwise === i;
          const when = b.kind === 'and' || isDefault ? null : branch.when;
          const first = drawn.entry ?? (branch.ending === null ? merge : null);
          const target = first ?? ending(branch.ending as Ending, scope);
          flow(split, target, when, isDefault);
          if (drawn.entry === null) {
            if (branch.ending === null) reached += 1;
            return;
          }
          if (drawn.exit === null) return;
          if (branch.ending !== null) return void flow(drawn.exit, ending(branch.ending, scope));
          flow(drawn.exit, merge);
          reached += 1;
        });
        if (reached === 0) {
          nodes.splice(
            nodes.findIndex((n) => n.id === merge),
            1,
          );
          return { entry: split, exit: null };
        }
        return { entry: split, exit: merge };
      }
      case 'loop': {
        const merge = add('xor', scope);
        const body = block(b.body, scope);
        const split = add('xor', scope);
        flow(merge, body.entry ?? split);
        if (body.entry !== null && body.exit !== null) flow(body.exit, split);
        flow(split, merge, b.again);
        leavesByDefault.add(split);
        return { entry: merge, exit: split };
      }
      case 'sub': {
        const id = add('sub', scope);
        const start = add('start', id);
        close(start, block(b.body, id), b.ending, id);
        for (const h of b.handlers) handler(h, id);
        return { entry: id, exit: boundaries(id, b.boundaries, scope) };
      }
    }
  };
  /** Draws the boundary events of `activity`; returns the node the activity's successor follows (a merge when a path rejoins). */
  const boundaries = (activity: string, list: readonly Boundary[], scope: string | null): string => {
    let exit = activity;
    for (const b of list) {
      const kind = b.kind === 'error' ? 'boundaryError' : b.kind === 'timer' ? 'boundaryTimer' : 'boundaryEscalation';
      const fields: Partial<GraphNode> = {
        attachedTo: activity,
        interrupting: b.kind === 'error' ? true : b.interrupting,
        ...(b.kind === 'timer' ? {} : { code: b.code }),
      };
      const id = add(kind, scope, fields);
      const then = block(b.then, scope);
      if (then.entry !== null) flow(id, then.entry);
      const from = then.entry === null ? id : then.exit;
      if (from === null) continue;
      if (b.to === 'back') flow(from, activity);
      else if (b.to === 'rejoin' && fields.interrupting === true) {
        if (exit === activity) {
          exit = add('xor', scope, { merge: true, pair: activity });
          flow(activity, exit);
        }
        flow(from, exit);
      } else flow(from, ending(b.ending, scope));
    }
    return exit;
  };
  const handler = (h: Handler, scope: string | null): void => {
    const interrupting = h.kind === 'error' ? true : h.interrupting;
    const esp = add('esp', scope, { interrupting });
    const start = add('espStart', esp, { trigger: h.kind, code: h.code, interrupting });
    close(start, block(h.body, esp), h.ending, esp);
  };

  const start = add('start', null);
  close(start, block(shape.body, null), shape.ending, null);
  for (const h of shape.handlers) handler(h, null);
  return { nodes, flows, start: shape.start, origin: shape.origin };
}

/** A node of the graph by id (throws for an unknown one: the graph is the test's own). */
export function nodeOf(graph: Graph, id: string): GraphNode {
  const found = graph.nodes.find((n) => n.id === id);
  if (found === undefined) throw new Error(`no node ${id} in the drawn model`);
  return found;
}
