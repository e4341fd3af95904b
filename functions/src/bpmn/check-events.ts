/**
 * The graph rules of timer boundary events and event-based gateways, beside
 * the general ones (check-graph.ts). A timer on a synchronous task could
 * never fire (the task runs inside one transaction), and a gateway branch
 * that could be reached another way would be a waiting point nobody removes
 * when the other branch wins; both are refused when the model loads.
 */
import { ModelError, type SequenceFlow } from './model';
import type { Draft } from './draft';

type NodeMap = ReadonlyMap<string, Draft>;
type FlowMap = ReadonlyMap<string, SequenceFlow>;

/**
 * Fills `boundaryEventIds` of the tasks timer boundary events are attached
 * to, in document order, and refuses a boundary event on anything but an
 * async service or send task or a receive task.
 */
export function attachBoundaryEvents(nodes: Map<string, Draft>): void {
  for (const boundary of [...nodes.values()]) {
    if (
      boundary.kind !== 'boundaryTimer' &&
      boundary.kind !== 'boundaryError' &&
      boundary.kind !== 'boundaryMessage' &&
      boundary.kind !== 'boundaryEscalation'
    )
      continue;
    const target = nodes.get(boundary.attachedToId);
    if (target === undefined)
      throw new ModelError(`attachedToRef ${boundary.attachedToId} is not a flow node of this process`, boundary.id);
    if (boundary.scope !== target.scope)
      throw new ModelError(
        `a boundary event drawn outside the scope of ${target.id}: draw it on its border`,
        boundary.id,
      );
    const attach = (t: Extract<Draft, { readonly boundaryEventIds: readonly string[] }>): void => {
      nodes.set(t.id, { ...t, boundaryEventIds: [...t.boundaryEventIds, boundary.id] });
    };
    if (boundary.kind === 'boundaryEscalation') {
      if (target.kind !== 'subProcess' || target.loop !== undefined)
        throw new ModelError(
          `an escalation boundary event on ${target.loop === undefined ? target.kind : 'multi-instance activity'} ${target.id}: escalations are thrown inside embedded subprocesses and caught on their border; a called process's or an item's escalation stays inside it`,
          boundary.id,
        );
      attach(target);
      continue;
    }
    if (target.loop !== undefined && 'boundaryEventIds' in target) {
      // A multi-instance activity's token waits for its items: a timer or message on it ends them all.
      if (boundary.kind === 'boundaryError')
        throw new ModelError(
          `an error boundary event on multi-instance activity ${target.id}: each item runs as an instance of its own, and a BPMN error does not leave it; catch it inside the activity (a subprocess with an error boundary event or error event subprocess)`,
          boundary.id,
        );
      attach(target);
      continue;
    }
    if (boundary.kind === 'boundaryError') {
      if (
        target.kind === 'serviceTask' ||
        target.kind === 'sendTask' ||
        target.kind === 'businessRuleTask' ||
        target.kind === 'subProcess'
      ) {
        attach(target);
        continue;
      }
      if (target.kind === 'callActivity')
        throw new ModelError(
          `an error boundary event on call activity ${target.id}: a BPMN error does not leave the called process here; catch it inside that process (an error boundary event or error event subprocess there)`,
          boundary.id,
        );
      throw new ModelError(
        `an error boundary event on ${target.kind} ${target.id}: errors are thrown by service, send and business rule tasks (BpmnError) and inside subprocesses, so they are caught there`,
        boundary.id,
      );
    }
    if (target.kind === 'subProcess' || target.kind === 'callActivity') {
      attach(target);
      continue;
    }
    if (boundary.kind === 'boundaryMessage') {
      const waits =
        target.kind === 'userTask' ||
        target.kind === 'receiveTask' ||
        ((target.kind === 'serviceTask' || target.kind === 'sendTask' || target.kind === 'businessRuleTask') &&
          target.async);
      if (!waits)
        throw new ModelError(
          `a message boundary event on ${target.kind} ${target.id}: a message can only interrupt where a token waits (an async task, a user task, a receive task, a subprocess)`,
          boundary.id,
        );
      if (target.kind === 'receiveTask' && target.messageName === boundary.messageName)
        throw new ModelError(
          `receive task ${target.id} and its boundary event both wait for ${boundary.messageName}: a message could not choose`,
          boundary.id,
        );
      const twin = target.boundaryEventIds
        .map((id) => nodes.get(id))
        .find((n) => n?.kind === 'boundaryMessage' && n.messageName === boundary.messageName);
      if (twin !== undefined)
        throw new ModelError(
          `${twin.id} and ${boundary.id} on ${target.id} both wait for ${boundary.messageName}: a message could not choose`,
          boundary.id,
        );
      attach(target);
      continue;
    }
    if (target.kind === 'serviceTask' || target.kind === 'sendTask' || target.kind === 'businessRuleTask') {
      if (!target.async) {
        throw new ModelError(
          `a timer on synchronous task ${target.id} could never fire (it runs inside one transaction): make the task inbox:async="true"`,
          boundary.id,
        );
      }
      nodes.set(target.id, { ...target, boundaryEventIds: [...target.boundaryEventIds, boundary.id] });
    } else if (target.kind === 'receiveTask' || target.kind === 'userTask') {
      nodes.set(target.id, { ...target, boundaryEventIds: [...target.boundaryEventIds, boundary.id] });
    } else {
      throw new ModelError(
        `a boundary event on ${target.kind} ${target.id}: timer boundary events go on async service, send and business rule tasks, user tasks and receive tasks only`,
        boundary.id,
      );
    }
  }
}

function checkEventGateway(gateway: Draft, nodes: NodeMap, flows: FlowMap): void {
  if (gateway.outgoing.length < 2) {
    throw new ModelError(
      `an event-based gateway with ${gateway.outgoing.length} branch(es): it needs at least two events to choose between`,
      gateway.id,
    );
  }
  const messages = new Map<string, string>();
  for (const flowId of gateway.outgoing) {
    const target = nodes.get(flows.get(flowId)?.targetId ?? '');
    if (target === undefined) continue; // toFlow already refused a dangling flow
    if (target.kind !== 'messageCatchEvent' && target.kind !== 'timerCatchEvent') {
      throw new ModelError(
        `flow ${flowId} leads to ${target.kind} ${target.id}: the branches of an event-based gateway go to message or timer catch events`,
        gateway.id,
      );
    }
    if (target.incoming.length !== 1) {
      throw new ModelError(
        `a branch of event-based gateway ${gateway.id} with ${target.incoming.length} incoming flows: the gateway must be its only way in`,
        target.id,
      );
    }
    if (target.kind !== 'messageCatchEvent') continue;
    const other = messages.get(target.messageName);
    if (other !== undefined) {
      throw new ModelError(
        `two branches of event-based gateway ${gateway.id} wait for message ${target.messageName} (${other} and ${target.id}): a message could not choose`,
        target.id,
      );
    }
    messages.set(target.messageName, target.id);
  }
}

/** The rules of one node that are about timers and event gateways. */
export function checkEvents(node: Draft, nodes: NodeMap, flows: FlowMap): void {
  if (
    (node.kind === 'boundaryTimer' || node.kind === 'boundaryError' || node.kind === 'boundaryMessage') &&
    node.incoming.length > 0
  ) {
    throw new ModelError(
      `a boundary event has no incoming sequence flows (${node.incoming.join(', ')}): it is reached through its task`,
      node.id,
    );
  }
  if (node.kind === 'eventBasedGateway') checkEventGateway(node, nodes, flows);
}

/** Where a token at `node` may go next: its flows' targets, the boundary events on it, a subprocess's start event. */
export function successors(node: Draft, nodes: NodeMap, flows: FlowMap): Draft[] {
  const next = node.outgoing.map((flowId) => nodes.get(flows.get(flowId)?.targetId ?? ''));
  const boundary = 'boundaryEventIds' in node ? node.boundaryEventIds.map((id) => nodes.get(id)) : [];
  const inside = node.kind === 'subProcess' || node.kind === 'eventSubProcess' ? [nodes.get(node.startEventId)] : [];
  return [...next, ...boundary, ...inside].filter((n): n is Draft => n !== undefined);
}
