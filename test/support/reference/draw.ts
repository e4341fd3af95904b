/**
 * A generated Shape drawn as a graph (graph.ts). Ids name the element's kind
 * and a number (`user4`, `xor7`), so a report reads like the model.
 */
import { type Graph, type GraphFlow, type GraphNode, MAIN_PROCESS, type NodeKind } from './graph';
import type { Block, Boundary, Ending, Flag, Handler, Shape } from './shapes';

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

  const callees: string[] = [];
  const scoped = new Set<string>();
  /** The process being drawn, and whether inside a multi-instance activity's items or a callee. */
  let proc = MAIN_PROCESS;
  let inItems = false;

  const add = (kind: NodeKind, scope: string | null, fields: Partial<GraphNode> = {}): string => {
    count += 1;
    const id = `${kind === 'orJoin' ? 'orj' : kind === 'espStart' ? 'espstart' : kind}${count}`;
    nodes.push({ id, kind, scope, process: proc, ...fields });
    if (inItems || proc !== MAIN_PROCESS || fields.loop !== undefined) scoped.add(id);
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
        // A body that ends every path (its own end events) never comes round: no split to go back from.
        if (body.entry !== null && body.exit === null) {
          flow(merge, body.entry);
          return { entry: merge, exit: null };
        }
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
      case 'call': {
        count += 1;
        const callee = `callee${count}`;
        const id = add('call', scope, { calls: callee });
        const caller = proc;
        proc = callee;
        callees.push(callee);
        close(add('start', null), block(b.callee, null), { kind: 'none' }, null);
        proc = caller;
        return { entry: id, exit: boundaries(id, b.boundaries, scope) };
      }
      case 'mi': {
        const loop = { sequential: b.sequential, count: b.count, completion: b.completion };
        const id = add(b.activity, scope, { loop });
        if (b.activity === 'sub') {
          const outer = inItems;
          inItems = true;
          close(add('start', id), block(b.body, id), { kind: 'none' }, id);
          inItems = outer;
        }
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
  return { nodes, flows, callees, scoped, start: shape.start, origin: shape.origin };
}
