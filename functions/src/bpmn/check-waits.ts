/**
 * A token moves within one transaction from one wait to the next. A cycle of
 * moves with no wait in it would spin until the engine's budget, and so
 * would a chain longer than the step limit; both are refused when the model
 * loads, naming the elements, so a model that loads does not stop half-way
 * with STEP_LIMIT.
 *
 * The moves are more than sequence flows: entering a subprocess goes to its
 * start event, its last end leaves it by its outgoing flow, and an error or
 * escalation goes to the boundary event or event subprocess that catches it
 * (by the engine's own rule: engine/scopes.ts, an event subprocess never
 * catches what comes out of its own run), and from a synchronous task,
 * whose handler may throw any code within the step, to whatever may catch
 * it. So the drawing "retry the subprocess on error" without a wait on the
 * way round is refused too.
 */
import { ModelError, type SequenceFlow, STEP_LIMIT } from './model';
import type { Draft } from './draft';

type Nodes = ReadonlyMap<string, Draft>;
type EventSubProcessDraft = Extract<Draft, { readonly kind: 'eventSubProcess' }>;

/** Whether a token stops at the node: a job, a person, a message, a timer, items or a called instance, a join waiting for its other flows. */
export function waitsAt(node: Draft): boolean {
  // A multi-instance activity's token waits for its items.
  if (node.loop !== undefined) return true;
  switch (node.kind) {
    case 'serviceTask':
    case 'sendTask':
    case 'businessRuleTask':
      return node.async;
    case 'parallelGateway':
    case 'inclusiveGateway':
      return node.incoming.length > 1;
    case 'userTask':
    case 'callActivity':
    case 'messageThrowEvent':
    case 'messageEndEvent':
    case 'receiveTask':
    case 'messageCatchEvent':
    case 'timerCatchEvent':
    case 'eventBasedGateway':
      return true;
    case 'subProcess':
    case 'eventSubProcess':
    case 'endEvent':
    case 'errorEndEvent':
    case 'escalationEndEvent':
    case 'escalationThrowEvent':
    case 'boundaryError':
    case 'boundaryMessage':
    case 'boundaryEscalation':
    case 'boundaryTimer':
    case 'startEvent':
    case 'messageStartEvent':
    case 'timerStartEvent':
    case 'passThrough':
    case 'exclusiveGateway':
      return false;
  }
}

/** Where a token goes when its scope `scopeId` (undefined: the process) has no token left: the scope's way out. */
function exitOf(
  scopeId: string | undefined,
  nodes: Nodes,
  flows: ReadonlyMap<string, SequenceFlow>,
  depth = 0,
): Draft[] {
  const scope = scopeId === undefined ? undefined : nodes.get(scopeId);
  if (scope === undefined || depth > 100) return [];
  // An event subprocess's run ends: its own scope may end with it.
  if (scope.kind === 'eventSubProcess') return exitOf(scope.scope, nodes, flows, depth + 1);
  if (scope.outgoing.length === 0) return exitOf(scope.scope, nodes, flows, depth + 1);
  return targets(scope, nodes, flows);
}

function targets(node: Draft, nodes: Nodes, flows: ReadonlyMap<string, SequenceFlow>): Draft[] {
  return node.outgoing.flatMap((flowId) => {
    const target = nodes.get(flows.get(flowId)?.targetId ?? '');
    return target === undefined ? [] : [target];
  });
}

/** The code a catcher catches (null: every code), or undefined when it is no catcher of this kind. */
function caughtCode(node: Draft, kind: 'error' | 'escalation'): string | null | undefined {
  if (kind === 'error') {
    if (node.kind === 'boundaryError') return node.errorCode;
    if (node.kind === 'eventSubProcess' && node.trigger.kind === 'error') return node.trigger.errorCode;
    return undefined;
  }
  if (node.kind === 'boundaryEscalation') return node.escalationCode;
  if (node.kind === 'eventSubProcess' && node.trigger.kind === 'escalation') return node.trigger.escalationCode;
  return undefined;
}

/** Of `candidates`, the one that catches `code`: the exact code before a catch-all. */
function catcherAmong(candidates: readonly Draft[], kind: 'error' | 'escalation', code: string): Draft | null {
  return (
    candidates.find((n) => caughtCode(n, kind) === code) ?? candidates.find((n) => caughtCode(n, kind) === null) ?? null
  );
}

/**
 * What catches an error or escalation `code` thrown in scope `scopeId`, as
 * the engine looks (engine/scopes.ts, throwError; engine/escalations.ts):
 * each scope outwards, its event subprocesses first (never the one the
 * throw comes out of, none once an interrupting one runs there), then the
 * boundary events on the scope's subprocess.
 */
function catcherOf(
  kind: 'error' | 'escalation',
  code: string,
  scopeId: string | undefined,
  nodes: Nodes,
): Draft | null {
  const all = [...nodes.values()];
  let left: EventSubProcessDraft | null = null;
  for (let scope = scopeId, depth = 0; depth < 100; depth++) {
    const handler = catcherAmong(
      all.filter(
        (n) =>
          n.kind === 'eventSubProcess' &&
          n.scope === scope &&
          caughtCode(n, kind) !== undefined &&
          (left === null || (n.id !== left.id && !left.interrupting)),
      ),
      kind,
      code,
    );
    if (handler !== null) return handler;
    if (scope === undefined) return null;
    const boundary = catcherAmong(
      all.filter((n) => 'attachedToId' in n && n.attachedToId === scope && caughtCode(n, kind) !== undefined),
      kind,
      code,
    );
    if (boundary !== null) return boundary;
    const node = nodes.get(scope);
    left = node?.kind === 'eventSubProcess' ? node : null;
    scope = node?.scope;
  }
  return null;
}

/**
 * What may catch an error of any code a synchronous task's handler throws
 * (`BpmnError` inside the transaction): the error boundary events on the
 * task, then, scope by scope outwards, the error event subprocesses and
 * boundary events that could catch one, up to the first that catches every
 * code.
 */
function anyErrorCatchers(task: Draft, nodes: Nodes): Draft[] {
  const all = [...nodes.values()];
  const found: Draft[] = all.filter((n) => n.kind === 'boundaryError' && n.attachedToId === task.id);
  if (found.some((n) => caughtCode(n, 'error') === null)) return found;
  let left: EventSubProcessDraft | null = null;
  for (let scope = task.scope, depth = 0; depth < 100; depth++) {
    const here = all.filter(
      (n) =>
        (n.kind === 'eventSubProcess' &&
          n.scope === scope &&
          caughtCode(n, 'error') !== undefined &&
          (left === null || (n.id !== left.id && !left.interrupting))) ||
        (scope !== undefined && n.kind === 'boundaryError' && n.attachedToId === scope),
    );
    found.push(...here);
    if (scope === undefined || here.some((n) => caughtCode(n, 'error') === null)) return found;
    const node = nodes.get(scope);
    left = node?.kind === 'eventSubProcess' ? node : null;
    scope = node?.scope;
  }
  return found;
}

/** Where a token at `node` (that does not wait there) can be next within the same step. */
export function movesFrom(node: Draft, nodes: Nodes, flows: ReadonlyMap<string, SequenceFlow>): Draft[] {
  const inside = (id: string): Draft[] => {
    const start = nodes.get(id);
    return start === undefined ? [] : [start];
  };
  if (node.kind === 'subProcess' || node.kind === 'eventSubProcess') return inside(node.startEventId);
  if (node.kind === 'errorEndEvent') {
    const catcher = catcherOf('error', node.errorCode, node.scope, nodes);
    return catcher === null ? [] : [catcher];
  }
  if (node.kind === 'escalationThrowEvent' || node.kind === 'escalationEndEvent') {
    const catcher = catcherOf('escalation', node.escalationCode, node.scope, nodes);
    // The thrower goes on (an intermediate event) or ends (its scope may end with it).
    const on = node.kind === 'escalationThrowEvent' ? targets(node, nodes, flows) : exitOf(node.scope, nodes, flows);
    return catcher === null ? on : [catcher, ...on];
  }
  // No outgoing flow: an end (explicit or implicit), after which its scope may end.
  const on = node.outgoing.length === 0 ? exitOf(node.scope, nodes, flows) : targets(node, nodes, flows);
  // A synchronous task's handler may throw a BPMN error within the step: to whatever may catch it.
  const sync =
    (node.kind === 'serviceTask' || node.kind === 'sendTask' || node.kind === 'businessRuleTask') && !node.async;
  return sync ? [...on, ...anyErrorCatchers(node, nodes)] : on;
}

/**
 * Refuses a cycle of moves none of which waits (the first one found, in
 * document order, as `a → b → a`) and a chain of more than
 * {@link STEP_LIMIT} such moves.
 */
export function checkWaits(nodes: Nodes, flows: ReadonlyMap<string, SequenceFlow>): void {
  const next = (node: Draft): Draft[] => movesFrom(node, nodes, flows).filter((target) => !waitsAt(target));
  // Depth-first over the nodes that do not wait: a node met again while on the path closes a cycle.
  const longest = new Map<string, number>();
  const onPath: string[] = [];
  const visit = (node: Draft): number => {
    const known = longest.get(node.id);
    if (known !== undefined) return known;
    const at = onPath.indexOf(node.id);
    if (at >= 0) {
      const cycle = [...onPath.slice(at), node.id];
      throw new ModelError(
        `a cycle with no wait in it (${cycle.join(' → ')}): a token would go round within one step until the step limit; put a wait in it (an async task, a user task, a message or timer event)`,
        node.id,
      );
    }
    onPath.push(node.id);
    const length = 1 + Math.max(0, ...next(node).map(visit));
    onPath.pop();
    longest.set(node.id, length);
    return length;
  };
  for (const node of nodes.values()) {
    if (waitsAt(node)) continue;
    if (visit(node) > STEP_LIMIT) {
      throw new ModelError(
        `a chain of ${longest.get(node.id)} elements without a wait starts here: a token passes at most ${STEP_LIMIT} in one step; put a wait in it`,
        node.id,
      );
    }
  }
}
