/**
 * The structural rules of a process graph, checked once at load time so the
 * engine can rely on them: defined ways in, every node reachable, no path that
 * silently stops, and exclusive gateways that always know where to go.
 */
import { ModelError, type SequenceFlow } from './model';
import { checkEvents, successors } from './check-events';
import type { Draft } from './draft';
import { checkWaits } from './check-waits';

/** The process's ways in: at most one none start event and any number of message start events, at least one in all. */
interface StartEvents {
  readonly none: Draft | null;
  /** Every start event (none and message), in document order. */
  readonly all: readonly Draft[];
}

/**
 * The start events: at most one none start event (where startProcess
 * starts), message start events each for a message name of its own (one
 * message must start a process one way), and at least one of either; none
 * has an incoming flow.
 */
function theStartEvents(processId: string, nodes: ReadonlyMap<string, Draft>): StartEvents {
  for (const node of nodes.values()) {
    if (node.kind === 'messageStartEvent' && node.scope !== undefined)
      throw new ModelError(
        `a message start event inside subprocess ${node.scope}: a subprocess starts at its none start event`,
        node.id,
      );
    if (node.kind === 'startEvent' && node.scope !== undefined && node.incoming.length > 0)
      throw new ModelError(`a start event has no incoming sequence flows (${node.incoming.join(', ')})`, node.id);
  }
  const all = [...nodes.values()].filter(
    (n) =>
      (n.kind === 'startEvent' || n.kind === 'messageStartEvent' || n.kind === 'timerStartEvent') &&
      n.scope === undefined,
  );
  const [none, second] = all.filter((n) => n.kind === 'startEvent');
  if (none !== undefined && second !== undefined) {
    throw new ModelError(
      `a second start event (the first is ${none.id}): a process has at most one none start event`,
      second.id,
    );
  }
  if (all.length === 0)
    throw new ModelError('no start event: the process needs a none, message or timer start event', processId);
  const byMessage = new Map<string, string>();
  for (const start of all) {
    if (start.incoming.length > 0)
      throw new ModelError(`a start event has no incoming sequence flows (${start.incoming.join(', ')})`, start.id);
    if (start.kind !== 'messageStartEvent') continue;
    const first = byMessage.get(start.messageName);
    if (first !== undefined) {
      throw new ModelError(
        `a second message start event for message ${start.messageName} (the first is ${first}): a message starts a process one way`,
        start.id,
      );
    }
    byMessage.set(start.messageName, start.id);
  }
  return { none: none ?? null, all };
}

function checkOutgoing(node: Draft): void {
  const count = node.outgoing.length;
  switch (node.kind) {
    case 'endEvent':
    case 'errorEndEvent':
    case 'messageEndEvent':
    case 'escalationEndEvent':
      if (count > 0) throw new ModelError('an end event has no outgoing sequence flows', node.id);
      return;
    case 'eventSubProcess':
      if (count > 0 || node.incoming.length > 0)
        throw new ModelError(
          'an event subprocess is not connected by sequence flows: its start event starts it, and it ends inside',
          node.id,
        );
      return;
    case 'exclusiveGateway':
    case 'eventBasedGateway':
    case 'inclusiveGateway':
    case 'parallelGateway':
      if (count === 0)
        throw new ModelError(
          'a gateway without an outgoing sequence flow: give it the flows it chooses between',
          node.id,
        );
      return;
    case 'passThrough':
    case 'subProcess':
    case 'callActivity':
    case 'messageThrowEvent':
    case 'boundaryError':
    case 'boundaryEscalation':
    case 'escalationThrowEvent':
    case 'boundaryMessage':
    case 'userTask':
    case 'businessRuleTask':
    case 'startEvent':
    case 'messageStartEvent':
    case 'timerStartEvent':
    case 'timerCatchEvent':
    case 'boundaryTimer':
    case 'serviceTask':
    case 'sendTask':
    case 'receiveTask':
    case 'messageCatchEvent':
      // No outgoing flow: an implicit end (BPMN, Camunda 8 and Flowable alike): the token ends there.
      if (count > 1) {
        throw new ModelError(
          `${count} outgoing sequence flows (${node.outgoing.join(', ')}): only a gateway may branch (a parallelGateway to take them all, an exclusiveGateway to choose one)`,
          node.id,
        );
      }
  }
}

function checkGateway(
  node: Draft & { readonly kind: 'exclusiveGateway' | 'inclusiveGateway' },
  flows: ReadonlyMap<string, SequenceFlow>,
): void {
  if (node.defaultFlowId !== null) {
    if (!node.outgoing.includes(node.defaultFlowId)) {
      throw new ModelError(
        `default flow ${node.defaultFlowId} is not one of its outgoing flows (${node.outgoing.join(', ')})`,
        node.id,
      );
    }
    if (flows.get(node.defaultFlowId)?.condition !== null) {
      throw new ModelError(
        `the default flow of ${node.id} has a condition; a default flow is taken when no condition holds, so it has none`,
        node.defaultFlowId,
      );
    }
  }
  if (node.outgoing.length < 2 || node.kind === 'inclusiveGateway') return;
  for (const flowId of node.outgoing) {
    if (flowId !== node.defaultFlowId && flows.get(flowId)?.condition === null) {
      throw new ModelError(
        `no condition on a flow leaving exclusive gateway ${node.id}: give it a condition or make it the gateway's default`,
        flowId,
      );
    }
  }
}

/** Two event subprocesses of one scope started by one message would be two tokens waiting for it: the message could not choose. */
function checkTriggers(nodes: ReadonlyMap<string, Draft>): void {
  const seen = new Map<string, string>();
  for (const node of nodes.values()) {
    if (node.kind !== 'eventSubProcess' || node.trigger.kind !== 'message') continue;
    const key = `${node.scope ?? ''}\u0000${node.trigger.messageName}`;
    const first = seen.get(key);
    if (first !== undefined)
      throw new ModelError(
        `event subprocesses ${first} and ${node.id} both start on ${node.trigger.messageName} in one scope: a message could not choose`,
        node.id,
      );
    seen.set(key, node.id);
  }
}

function checkReachable(
  starts: readonly Draft[],
  nodes: ReadonlyMap<string, Draft>,
  flows: ReadonlyMap<string, SequenceFlow>,
): void {
  // Event subprocesses are entered by their trigger, not by a flow.
  const roots = [...starts, ...[...nodes.values()].filter((n) => n.kind === 'eventSubProcess')];
  const reached = new Set(roots.map((s) => s.id));
  const pending = [...roots];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    for (const target of successors(node, nodes, flows)) {
      if (!reached.has(target.id)) {
        reached.add(target.id);
        pending.push(target);
      }
    }
  }
  for (const node of nodes.values()) {
    if (!reached.has(node.id))
      throw new ModelError(
        `unreachable from start event${starts.length > 1 ? 's' : ''} ${starts.map((s) => s.id).join(', ')}: no path of sequence flows leads here`,
        node.id,
      );
  }
}

/**
 * Checks the graph rules over nodes and flows whose ends are known to exist:
 * at most one none start event, message start events each for a message of
 * its own, at least one start event, none with incoming and each with one
 * outgoing flow; end events without outgoing flows; tasks and events with
 * exactly one; conditions only on flows leaving an exclusive gateway;
 * gateway defaults that are outgoing and unconditioned, and a condition on
 * every other branch; every node reachable from some start event.
 *
 * @returns the id of the none start event, or null when the process starts by message only.
 * @throws ModelError naming the first offending element in document order.
 */
export function checkGraph(
  processId: string,
  nodes: ReadonlyMap<string, Draft>,
  flows: ReadonlyMap<string, SequenceFlow>,
): string | null {
  const starts = theStartEvents(processId, nodes);
  for (const flow of flows.values()) {
    const [from, to] = [nodes.get(flow.sourceId), nodes.get(flow.targetId)];
    if (from?.scope !== to?.scope) {
      throw new ModelError(
        `a sequence flow from ${flow.sourceId} to ${flow.targetId} crosses the border of subprocess ${from?.scope ?? to?.scope ?? '?'}: flows stay inside; a subprocess is left when its last token ends`,
        flow.id,
      );
    }
    const source = nodes.get(flow.sourceId)?.kind;
    if (flow.condition !== null && source !== 'exclusiveGateway' && source !== 'inclusiveGateway') {
      throw new ModelError(
        `a condition on a flow leaving ${source ?? 'node'} ${flow.sourceId}: only exclusive and inclusive gateways evaluate conditions (a parallel gateway takes every flow)`,
        flow.id,
      );
    }
  }
  for (const node of nodes.values()) {
    checkOutgoing(node);
    if (node.kind === 'exclusiveGateway' || node.kind === 'inclusiveGateway') checkGateway(node, flows);
    checkEvents(node, nodes, flows);
  }
  checkReachable(starts.all, nodes, flows);
  checkWaits(nodes, flows);
  checkTriggers(nodes);
  return starts.none?.id ?? null;
}
