/**
 * Moving a token through the graph: into a node and on, until it waits,
 * ends or stops with an incident. Every transition ends here.
 */
import { evaluateCondition } from '../bpmn/condition';
import type { ProcessModel } from '../bpmn/model';
import { end, node, raise, type Run, targetOf, update } from './run';
import type { ExecutionState } from './state';
import { waitAtAsyncTask, waitAtGateway, waitForMessage, waitForTimer } from './waits';

/** Upper bound of nodes one token passes in one step; a model that loops without waiting hits it. */
export const STEP_LIMIT = 1_000;

/** The flow an exclusive gateway takes: first true condition in document order, else the default. */
function chooseFlow(
  model: ProcessModel,
  gatewayId: string,
  variables: Readonly<Record<string, unknown>>,
): string | null {
  const gateway = node(model, gatewayId);
  const defaultFlowId = gateway.kind === 'exclusiveGateway' ? gateway.defaultFlowId : null;
  for (const flowId of gateway.outgoing) {
    const flow = model.flows[flowId];
    if (flow === undefined || flowId === defaultFlowId) continue;
    if (flow.condition === null || evaluateCondition(flow.condition, variables)) return flowId;
  }
  return defaultFlowId;
}

/** Moves a token into `nodeId` and on, until it waits, ends or hits an incident. The token holds no point or timer (see `release`). */
export function enter(run: Run, start: ExecutionState, firstNodeId: string): void {
  if ((start.timerIds?.length ?? 0) > 0 || (start.gatewayWaits?.length ?? 0) > 0) {
    throw new Error(`token ${start.id} moves on without releasing its timers and waiting points`);
  }
  let execution = start;
  let nodeId = firstNodeId;
  for (let steps = 0; ; steps++) {
    execution = update(run, execution, {
      activityId: nodeId,
      step: execution.step + 1,
      status: 'ACTIVE',
      jobId: null,
      waitingFor: null,
    });
    if (steps >= STEP_LIMIT) return raise(run, execution, 'STEP_LIMIT', `passed ${STEP_LIMIT} nodes without waiting`);
    const current = node(run.model, nodeId);
    let nextFlow: string | null | undefined;
    switch (current.kind) {
      case 'startEvent':
      case 'messageStartEvent':
      case 'boundaryTimer':
        nextFlow = current.outgoing[0];
        break;
      case 'endEvent':
        return end(run, execution, 'ENDED');
      case 'serviceTask':
      case 'sendTask': {
        if (current.async) return waitAtAsyncTask(run, execution, current);
        const handler = run.sync[current.id];
        if (handler === undefined) throw new Error(`no synchronous handler registered for task ${current.id}`);
        run.instance = {
          ...run.instance,
          variables: { ...run.instance.variables, ...handler(run.instance.variables) },
          updatedAt: run.now,
        };
        nextFlow = current.outgoing[0];
        break;
      }
      case 'messageCatchEvent':
      case 'receiveTask':
        return waitForMessage(run, execution, current);
      case 'timerCatchEvent':
        return waitForTimer(run, execution, current);
      case 'eventBasedGateway':
        return waitAtGateway(run, execution, current);
      case 'exclusiveGateway':
        nextFlow = chooseFlow(run.model, current.id, run.instance.variables);
        if (nextFlow === null)
          return raise(
            run,
            execution,
            'NO_MATCHING_FLOW',
            `no condition of gateway ${current.id} holds and it has no default flow`,
          );
        break;
    }
    if (nextFlow === undefined) throw new Error(`node ${nodeId} has no outgoing flow`);
    nodeId = targetOf(run.model, nextFlow);
  }
}

/** Moves a token on from `fromId` by its (single) outgoing flow: the node it waited at, or the catch event of the gateway branch that won. */
export function leaveFrom(run: Run, execution: ExecutionState, fromId: string): void {
  const flowId = node(run.model, fromId).outgoing[0];
  if (flowId === undefined) throw new Error(`node ${fromId} has no outgoing flow`);
  enter(run, execution, targetOf(run.model, flowId));
}
