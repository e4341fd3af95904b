/**
 * A token moves within one transaction from one wait to the next. A cycle of
 * sequence flows with no wait in it would spin until the engine's step
 * limit, and so would a chain longer than that limit; both are refused when
 * the model loads, naming the elements, so a model that loads never stops
 * half-way with STEP_LIMIT.
 */
import { ModelError, type SequenceFlow, STEP_LIMIT } from './model';
import type { Draft } from './draft';

/** Whether a token stops at the node (a job, a person, a message, a timer, a join waiting for its other flows) or ends there. */
export function waitsAt(node: Draft, nodes: ReadonlyMap<string, Draft>): boolean {
  // A multi-instance activity's token waits for its items.
  if (node.loop !== undefined) return true;
  switch (node.kind) {
    case 'subProcess':
      // A subprocess with a wait anywhere inside stops its token there (its child's, then its own).
      return [...nodes.values()].some((n) => n.scope === node.id && waitsAt(n, nodes));
    case 'errorEndEvent':
    case 'eventSubProcess':
      return true;
    case 'boundaryError':
    case 'boundaryMessage':
    case 'boundaryEscalation':
    case 'escalationThrowEvent':
      return false;
    case 'escalationEndEvent':
      return true;
    case 'serviceTask':
    case 'sendTask':
    case 'businessRuleTask':
      return node.async;
    case 'parallelGateway':
      return node.incoming.length > 1;
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
    case 'endEvent':
      return true;
    case 'startEvent':
    case 'messageStartEvent':
    case 'timerStartEvent':
    case 'boundaryTimer':
    case 'passThrough':
    case 'exclusiveGateway':
      return false;
  }
}

/**
 * Refuses a cycle made only of nodes that do not wait (the first one found,
 * in document order, as `a → b → a`) and a chain of more than
 * {@link STEP_LIMIT} such nodes.
 */
export function checkWaits(nodes: ReadonlyMap<string, Draft>, flows: ReadonlyMap<string, SequenceFlow>): void {
  const next = (node: Draft): Draft[] =>
    node.outgoing.flatMap((flowId) => {
      const target = nodes.get(flows.get(flowId)?.targetId ?? '');
      return target === undefined || waitsAt(target, nodes) ? [] : [target];
    });
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
        `a cycle of sequence flows with no wait in it (${cycle.join(' → ')}): a token would go round within one step until the step limit; put a wait in it (an async task, a user task, a message or timer event)`,
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
    if (waitsAt(node, nodes)) continue;
    if (visit(node) > STEP_LIMIT) {
      throw new ModelError(
        `a chain of ${longest.get(node.id)} elements without a wait starts here: a token passes at most ${STEP_LIMIT} in one step; put a wait in it`,
        node.id,
      );
    }
  }
}
