/**
 * What a token of an instance can still reach in its version's model: the
 * elements a walk forward from where it stands can meet, for the deploy's
 * check of the step handlers older versions still need
 * (operations/unreached-handlers.ts). Conservative, never short: every
 * outgoing flow is taken whatever its condition, every boundary event of an
 * element met may fire, every event subprocess of a scope met may start,
 * and a token inside a subprocess may leave it (by its outgoing flows or
 * its boundary events). Not followed: a call activity's called process (a
 * new call starts on the called process's deployed version, which the app
 * check covers). Pure.
 */
import type { FlowNode, ProcessModel } from './model';

/** Where a token stands: its element, and whether that element itself may run (again). */
export interface WalkStart {
  readonly elementId: string;
  /**
   * The element itself runs for this token (again): a task whose job failed
   * (a retry runs it), a multi-instance activity whose items run its body.
   * False for a token whose element's run is already counted (a pending
   * job) or that only waits there (a message, a timer, a subprocess's
   * children, which are tokens of their own).
   */
  readonly self: boolean;
}

const bodyStart = (node: FlowNode): string | null =>
  node.kind === 'subProcess' || node.kind === 'eventSubProcess' ? node.startEventId : null;

/** The ids of the elements the tokens at `starts` can still reach in `model` (their own only when `self`). */
export function reachableElements(model: ProcessModel, starts: readonly WalkStart[]): Set<string> {
  const nodes = Object.values(model.nodes);
  const boundaryOf = new Map<string, string[]>();
  const eventSubsOf = new Map<string, string[]>();
  for (const node of nodes) {
    if ('attachedToId' in node)
      boundaryOf.set(node.attachedToId, [...(boundaryOf.get(node.attachedToId) ?? []), node.id]);
    if (node.kind === 'eventSubProcess') {
      const scope = node.scope ?? '';
      eventSubsOf.set(scope, [...(eventSubsOf.get(scope) ?? []), node.id]);
    }
  }
  const reached = new Set<string>();
  const exited = new Set<string>();
  const queue: string[] = [];
  const enter = (id: string | null | undefined): void => {
    if (id === null || id === undefined || reached.has(id) || !Object.hasOwn(model.nodes, id)) return;
    reached.add(id);
    queue.push(id);
  };
  /** What may come after a token at `node`, itself left out. */
  const after = (node: FlowNode): void => {
    for (const flowId of node.outgoing) enter(model.flows[flowId]?.targetId);
    for (const id of boundaryOf.get(node.id) ?? []) enter(id);
    leave(node.scope);
  };
  /** A token in scope `scope` may start its event subprocesses and leave it. */
  const leave = (scope: string | undefined): void => {
    const key = scope ?? '';
    if (exited.has(key)) return;
    exited.add(key);
    for (const id of eventSubsOf.get(key) ?? []) enter(id);
    if (scope === undefined) return;
    const container = model.nodes[scope];
    // An event subprocess that ends leaves its own scope; a subprocess goes on by its flows and boundaries.
    if (container !== undefined) after(container);
  };
  for (const start of starts) {
    const node = model.nodes[start.elementId];
    if (node === undefined) continue;
    if (start.self) {
      reached.add(node.id);
      enter(bodyStart(node));
    }
    after(node);
  }
  while (queue.length > 0) {
    const node = model.nodes[queue.shift() ?? ''];
    if (node === undefined) continue;
    enter(bodyStart(node));
    after(node);
  }
  return reached;
}
