/**
 * Joining gateways in the pure core: a parallel join waits for a token on
 * every incoming flow; an inclusive join waits for a token on every incoming
 * flow that a token of its scope can still reach, so it goes on as soon as
 * nothing upstream can bring another. Tokens that wait at a join are
 * WAITING_JOIN with the flow they came by (`arrivedBy`).
 */
import type { InclusiveGatewayNode, ParallelGatewayNode, ProcessModel } from '../bpmn/model';
import { end, liveTokens, release, type Run, update } from './run';
import type { ExecutionState } from './state';

type JoinNode = ParallelGatewayNode | InclusiveGatewayNode;

/** The other tokens waiting at `gateway` in `execution`'s scope, oldest first. */
function waitingAt(run: Run, gateway: JoinNode, execution: ExecutionState): ExecutionState[] {
  return liveTokens(run)
    .filter(
      (t) =>
        t.status === 'WAITING_JOIN' &&
        t.activityId === gateway.id &&
        t.id !== execution.id &&
        t.parentId === execution.parentId,
    )
    .sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime() || a.id.localeCompare(b.id));
}

/**
 * Whether a token at `from` can reach node `target` along sequence flows
 * and boundary events without passing a node of `avoid` (the node it stands
 * at is not passed: a token at a fork is on its way down one of its flows).
 */
export function reaches(model: ProcessModel, from: string, target: string, avoid: ReadonlySet<string>): boolean {
  const seen = new Set<string>([from]);
  for (const pending = [from]; pending.length > 0;) {
    const id = pending.pop() as string;
    if (id !== from && avoid.has(id)) continue;
    if (id === target) return true;
    const node = model.nodes[id];
    if (node === undefined) continue;
    const next = [
      ...node.outgoing.map((f) => model.flows[f]?.targetId),
      ...('boundaryEventIds' in node ? node.boundaryEventIds : []),
    ];
    for (const n of next) {
      if (n === undefined || seen.has(n)) continue;
      seen.add(n);
      pending.push(n);
    }
  }
  return false;
}

/**
 * A token arrives at a join by `via` (null: placed there by a repair, which
 * stands for the first flow no token has brought yet) and waits there. When
 * the join can go on (parallel: a token on every incoming flow; inclusive:
 * on every incoming flow a token of the scope can still reach), one waiting
 * token per flow is consumed: this one goes on, the others end. Returns
 * whether it goes on.
 */
export function join(run: Run, execution: ExecutionState, gateway: JoinNode, via: string | null): boolean {
  const here = waitingAt(run, gateway, execution);
  const arrivedBy =
    via ?? gateway.incoming.find((f) => !here.some((t) => t.arrivedBy === f)) ?? gateway.incoming[0] ?? null;
  const waiting = update(run, execution, { status: 'WAITING_JOIN', arrivedBy: arrivedBy ?? undefined });
  const byFlow = (flowId: string): ExecutionState | undefined =>
    waiting.arrivedBy === flowId ? waiting : here.find((t) => t.arrivedBy === flowId);
  const missing = gateway.incoming.filter((f) => byFlow(f) === undefined);
  if (gateway.kind === 'parallelGateway' ? missing.length > 0 : !nothingUpstream(run, gateway, waiting, missing))
    return false;
  for (const flowId of gateway.incoming) {
    const token = byFlow(flowId);
    if (token !== undefined && token.id !== waiting.id) end(run, release(run, token), 'ENDED');
  }
  update(run, waiting, { status: 'ACTIVE', arrivedBy: undefined });
  return true;
}

/**
 * The nodes with a path to one of `filled` (incoming flows of the join a
 * token has brought), along flows backwards (a boundary event's way back is
 * its activity), not through the join itself.
 */
function feedingFilled(model: ProcessModel, gateway: JoinNode, filled: readonly string[]): Set<string> {
  const before = new Map<string, string[]>();
  const link = (from: string, to: string): void => void before.set(to, [...(before.get(to) ?? []), from]);
  for (const flow of Object.values(model.flows)) link(flow.sourceId, flow.targetId);
  for (const node of Object.values(model.nodes)) if ('attachedToId' in node) link(node.attachedToId, node.id);
  const found = new Set<string>();
  const pending = filled.flatMap((f) => {
    const source = model.flows[f]?.sourceId;
    return source === undefined ? [] : [source];
  });
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    if (found.has(id) || id === gateway.id) continue;
    found.add(id);
    pending.push(...(before.get(id) ?? []));
  }
  return found;
}

/**
 * Whether no live token of the join's scope (other than those waiting at
 * it) can still bring a token to one of the `missing` flows: BPMN 2.0's
 * activation rule of the inclusive gateway (13.3.2). A token blocks the
 * join only by a path to a missing flow that passes neither the join nor a
 * node with a path to a flow already filled: a token that can only come
 * round through the join, or that is on its way to a filled flow, will not
 * bring the missing one first.
 */
function nothingUpstream(run: Run, gateway: JoinNode, waiting: ExecutionState, missing: readonly string[]): boolean {
  if (missing.length === 0) return true;
  const sources = missing.flatMap((f) => {
    const source = run.model.flows[f]?.sourceId;
    return source === undefined ? [] : [source];
  });
  const filled = gateway.incoming.filter((f) => !missing.includes(f));
  const avoid = new Set([gateway.id, ...feedingFilled(run.model, gateway, filled)]);
  return !liveTokens(run).some(
    (t) =>
      t.parentId === waiting.parentId &&
      t.trigger !== true &&
      !(t.status === 'WAITING_JOIN' && t.activityId === gateway.id) &&
      t.id !== waiting.id &&
      sources.some((s) => reaches(run.model, t.activityId, s, avoid)),
  );
}

/**
 * A token waiting at an inclusive join that can go on now because the
 * tokens that could have come ended or went elsewhere: the oldest such, or
 * null. The caller moves it into the join again, which then goes on.
 */
export function readyInclusiveJoin(run: Run): ExecutionState | null {
  for (const token of liveTokens(run)) {
    if (token.status !== 'WAITING_JOIN') continue;
    const gateway = run.model.nodes[token.activityId];
    if (gateway?.kind !== 'inclusiveGateway') continue;
    const here = [token, ...waitingAt(run, gateway, token)];
    const missing = gateway.incoming.filter((f) => !here.some((t) => t.arrivedBy === f));
    if (nothingUpstream(run, gateway, token, missing)) return token;
  }
  return null;
}
