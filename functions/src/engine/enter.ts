/**
 * Moving tokens through the graph: into a node and on, until each waits,
 * ends or stops with an incident. Every transition ends here. A fork makes
 * new tokens; they move after the one that forked them, in flow order.
 */
import {
  type EndEventNode,
  type InclusiveGatewayNode,
  OUTPUTS_AS_PASSED,
  type ProcessModel,
  STEP_LIMIT,
  TRANSITION_BUDGET,
} from '../bpmn/model';
import { executionId } from './ids';
import { end, liveTokens, newToken, noRoomFor, node, raise, release, type Run, targetOf, tokenOf, update } from './run';
import type { ExecutionState } from './state';
import { waitAtAsyncTask, waitAtCall, waitAtGateway, waitAtUserTask, waitForMessage, waitForTimer } from './waits';
import { BpmnError } from '../core/errors';
import { cancelInside, enterScope, leaveScopeIfDone, type Move, throwError } from './scopes';
import { join, readyInclusiveJoin } from './joins';
import { enterItems } from './items';
import { escalate } from './escalations';
import { flowTaken, resultInto, type Stop } from './expressions';

export { STEP_LIMIT };

/** The flow an exclusive gateway takes: first true condition in document order, else the default; a failed FEEL condition stops. */
function chooseFlow(
  model: ProcessModel,
  gatewayId: string,
  variables: Readonly<Record<string, unknown>>,
): string | null | Stop {
  const gateway = node(model, gatewayId);
  const defaultFlowId = gateway.kind === 'exclusiveGateway' ? gateway.defaultFlowId : null;
  for (const flowId of gateway.outgoing) {
    const flow = model.flows[flowId];
    if (flow === undefined || flowId === defaultFlowId) continue;
    const taken = flowTaken(flow, variables);
    if (taken !== false) return taken === true ? flowId : taken;
  }
  return defaultFlowId;
}

/** The flows an inclusive gateway takes: every one whose condition holds (or that has none), else the default. */
function inclusiveFlows(
  model: ProcessModel,
  gateway: InclusiveGatewayNode,
  variables: Readonly<Record<string, unknown>>,
): string[] | Stop {
  const taken: string[] = [];
  for (const flowId of gateway.outgoing) {
    const flow = model.flows[flowId];
    if (flow === undefined || flowId === gateway.defaultFlowId) continue;
    const holds = flowTaken(flow, variables);
    if (holds === true) taken.push(flowId);
    else if (holds !== false) return holds;
  }
  if (taken.length > 0) return taken;
  return gateway.defaultFlowId === null ? [] : [gateway.defaultFlowId];
}

/**
 * A token goes down each of `flows`: this one down the first, a new token
 * (its id derived from this token, its step and the flow, so a re-run of
 * the step makes the same tokens) down each other. The new ones are queued.
 */
function fork(run: Run, execution: ExecutionState, flows: readonly string[], queue: Move[]): Move | Stop {
  const [first, ...rest] = flows;
  if (first === undefined) throw new Error(`fork at ${execution.activityId} with no flow`);
  // All of the new tokens, or none.
  const full = noRoomFor(run, rest.length);
  if (full !== null) return { reason: full.reason, message: `forking ${flows.length} ways: ${full.message}` };
  for (const flowId of rest) {
    const id = executionId(run.instance.id, `fork:${execution.id}:${execution.step}:${flowId}`);
    const token = newToken(run, id, execution.activityId, execution.parentId);
    if (token === null) throw new Error(`no room for the token of ${flowId} after room was found`);
    queue.push({ execution: token, nodeId: targetOf(run.model, flowId), via: flowId });
  }
  return { execution, nodeId: targetOf(run.model, first), via: first };
}

/**
 * A terminate end event ends its scope: at the process level every other
 * live token is cancelled (its points, timers, job and user task go) and
 * the instance completes; inside a subprocess, every other token in it, and
 * the subprocess is left.
 */
function terminate(run: Run, execution: ExecutionState, event: EndEventNode, queue: Move[]): void {
  const reason = `terminate end event ${event.id} ended ${execution.parentId === undefined ? 'the instance' : 'its subprocess'}`;
  end(run, execution, 'ENDED');
  if (execution.parentId !== undefined) {
    cancelInside(run, execution.parentId, reason);
    leaveScopeIfDone(run, execution.parentId, queue);
    return;
  }
  for (const token of liveTokens(run)) end(run, release(run, token, { reason }), 'CANCELLED');
}

/** A BPMN error thrown at a token's node: caught (the catcher is queued) or an UNCAUGHT_ERROR incident on the token. */
function thrown(run: Run, execution: ExecutionState, code: string, atActivity: boolean, queue: Move[]): null {
  if (!throwError(run, execution, code, atActivity, queue))
    raise(
      run,
      execution,
      'UNCAUGHT_ERROR',
      `BPMN error ${code} thrown at ${execution.activityId} is caught by no error boundary event`,
    );
  return null;
}

/** A gateway found no condition true and has no default flow: the token stops with NO_MATCHING_FLOW. */
function noFlow(run: Run, execution: ExecutionState, gatewayId: string): null {
  raise(run, execution, 'NO_MATCHING_FLOW', `no condition of gateway ${gatewayId} holds and it has no default flow`);
  return null;
}

/** Moves one token until it waits, ends or stops; returns the move it makes next, or null when it stopped. */
function step(run: Run, move: Move, queue: Move[], steps: number): Move | null {
  const { nodeId, via } = move;
  const execution = update(run, move.execution, {
    activityId: nodeId,
    step: move.execution.step + 1,
    status: 'ACTIVE',
    jobId: null,
    waitingFor: null,
  });
  // The budget ran out earlier in this step: the token stops where it is (the incident names the one that passed it).
  if (run.exhausted) return null;
  if (steps >= STEP_LIMIT) {
    raise(run, execution, 'STEP_LIMIT', `passed ${STEP_LIMIT} nodes without waiting`);
    return null;
  }
  run.spent += 1;
  if (run.spent > TRANSITION_BUDGET) {
    run.exhausted = true;
    raise(
      run,
      execution,
      'STEP_LIMIT',
      `the step did ${TRANSITION_BUDGET} nodes and tokens in all without waiting (a loop through events or handlers?): every token still moving stopped where it stood`,
    );
    return null;
  }
  const current = node(run.model, nodeId);
  const next = (flowId: string | undefined): Move | null => {
    if (flowId !== undefined) return { execution, nodeId: targetOf(run.model, flowId), via: flowId };
    // No outgoing flow: an implicit end event.
    end(run, execution, 'ENDED');
    leaveScopeIfDone(run, execution.parentId, queue);
    return null;
  };
  const forkOrRaise = (flows: readonly string[]): Move | null => {
    const moved = fork(run, execution, flows, queue);
    if ('nodeId' in moved) return moved;
    raise(run, execution, moved.reason, moved.message);
    return null;
  };
  if (current.io !== undefined && OUTPUTS_AS_PASSED.has(current.kind)) {
    const passed = resultInto(current.io, run.instance.variables, {}, current.id);
    if (!('values' in passed)) return (raise(run, execution, passed.reason, passed.message), null);
    run.instance = { ...run.instance, variables: passed.values, updatedAt: run.now };
  }
  if (current.loop !== undefined) {
    let moved: Move | null = null;
    enterItems(run, execution, { ...current, loop: current.loop }, (flowId) => (moved = next(flowId)));
    return moved;
  }
  switch (current.kind) {
    case 'startEvent':
    case 'messageStartEvent':
    case 'timerStartEvent':
    case 'boundaryTimer':
    case 'boundaryError':
    case 'boundaryMessage':
    case 'boundaryEscalation':
    case 'passThrough':
      return next(current.outgoing[0]);
    case 'endEvent':
      if (current.terminate) return (terminate(run, execution, current, queue), null);
      end(run, execution, 'ENDED');
      leaveScopeIfDone(run, execution.parentId, queue);
      return null;
    case 'errorEndEvent':
      return thrown(run, execution, current.errorCode, false, queue);
    case 'escalationThrowEvent':
    case 'escalationEndEvent': {
      escalate(run, execution, current.escalationCode, queue);
      // An interrupting catcher may have ended the thrower with its scope.
      const still = tokenOf(run, execution.id);
      if (still === undefined || still.status === 'CANCELLED' || !run.instance.activeExecutionIds.includes(still.id))
        return null;
      return current.kind === 'escalationThrowEvent' ? next(current.outgoing[0]) : next(undefined);
    }
    case 'subProcess':
    case 'eventSubProcess':
      enterScope(run, execution, current, queue);
      return null;
    case 'serviceTask':
    case 'sendTask':
    case 'businessRuleTask': {
      if (current.async) {
        waitAtAsyncTask(run, execution, current);
        return null;
      }
      const handler = run.sync[current.id];
      if (handler === undefined) throw new Error(`no synchronous handler registered for task ${current.id}`);
      let result: Readonly<Record<string, unknown>>;
      try {
        result = handler(run.instance.variables);
      } catch (err) {
        if (err instanceof BpmnError) return thrown(run, execution, err.code, true, queue);
        throw err;
      }
      run.instance = { ...run.instance, variables: { ...run.instance.variables, ...result }, updatedAt: run.now };
      return next(current.outgoing[0]);
    }
    case 'messageThrowEvent':
    case 'messageEndEvent':
      // A job publishes the message after the commit; then the token goes on (or ends).
      waitAtAsyncTask(run, execution, current);
      return null;
    case 'userTask':
      waitAtUserTask(run, execution, current);
      return null;
    case 'callActivity':
      waitAtCall(run, execution, current);
      return null;
    case 'messageCatchEvent':
    case 'receiveTask':
      waitForMessage(run, execution, current);
      return null;
    case 'timerCatchEvent':
      waitForTimer(run, execution, current);
      return null;
    case 'eventBasedGateway':
      waitAtGateway(run, execution, current);
      return null;
    case 'exclusiveGateway': {
      const flowId = chooseFlow(run.model, current.id, run.instance.variables);
      if (flowId !== null && typeof flowId !== 'string')
        return (raise(run, execution, flowId.reason, flowId.message), null);
      return flowId !== null ? next(flowId) : noFlow(run, execution, current.id);
    }
    case 'inclusiveGateway': {
      if (current.incoming.length > 1 && !join(run, execution, current, via)) return null;
      const flows = inclusiveFlows(run.model, current, run.instance.variables);
      if (!Array.isArray(flows)) return (raise(run, execution, flows.reason, flows.message), null);
      return flows.length > 0 ? forkOrRaise(flows) : noFlow(run, execution, current.id);
    }
    case 'parallelGateway':
      if (current.incoming.length > 1 && !join(run, execution, current, via)) return null;
      return forkOrRaise(current.outgoing);
  }
}

/**
 * Moves a token into `firstNodeId` (by flow `via`, which a join needs) and
 * on, then every token a fork made on the way, until each waits, ends or
 * hits an incident. The token holds no point or timer (see `release`).
 */
export function enter(run: Run, start: ExecutionState, firstNodeId: string, via: string | null = null): void {
  moveAll(run, [{ execution: start, nodeId: firstNodeId, via }]);
}

/**
 * The next queued move; when none is left, an inclusive join that can go on
 * now (the tokens that could have come ended or went elsewhere) enters its
 * join again, which then goes on.
 */
function nextMove(run: Run, queue: Move[]): Move | undefined {
  const queued = queue.shift();
  if (queued !== undefined) return queued;
  const ready = readyInclusiveJoin(run);
  if (ready === null) return undefined;
  return {
    execution: update(run, ready, { status: 'ACTIVE' }),
    nodeId: ready.activityId,
    via: ready.arrivedBy ?? null,
  };
}

/** Runs queued moves (and the ones they queue: forks, children of subprocesses, scopes left, errors caught) until none is left. */
export function moveAll(run: Run, queue: Move[]): void {
  for (let queued = nextMove(run, queue); queued !== undefined; queued = nextMove(run, queue)) {
    // A token queued earlier in this step may have ended since (a terminate end event, an error a scope caught): it stays ended.
    const start = tokenOf(run, queued.execution.id) ?? queued.execution;
    if (!run.instance.activeExecutionIds.includes(start.id) || start.status === 'ENDED' || start.status === 'CANCELLED')
      continue;
    const move: Move = { ...queued, execution: start };
    if (
      (start.timerIds?.length ?? 0) > 0 ||
      (start.gatewayWaits?.length ?? 0) > 0 ||
      (start.boundaryWaits?.length ?? 0) > 0
    ) {
      throw new Error(`token ${start.id} moves on without releasing its timers and waiting points`);
    }
    let current: Move | null = move;
    for (let steps = 0; current !== null; steps++) current = step(run, current, queue, steps);
  }
}

/** Moves a token on from `fromId` by its (single) outgoing flow: the node it waited at, or the catch event of the gateway branch that won. */
export function leaveFrom(run: Run, execution: ExecutionState, fromId: string): void {
  const flowId = node(run.model, fromId).outgoing[0];
  if (flowId !== undefined) return enter(run, execution, targetOf(run.model, flowId), flowId);
  // No outgoing flow: the token ends there, an implicit end event.
  end(run, execution, 'ENDED');
  const queue: Move[] = [];
  leaveScopeIfDone(run, execution.parentId, queue);
  moveAll(run, queue);
}
