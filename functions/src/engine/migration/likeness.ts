/**
 * Whether a token may move from an element of one version to an element of
 * another as it stands (migration, plan.ts): the same kind, the same scope,
 * and for what it waits with, the same wait. Pure: models and a token in,
 * the reason it may not move out (null: it may).
 */
import { canonicalJson } from '../../core/hash';
import { type FlowNode, handlerKeyOf, publishedMessage } from '../../bpmn/model';
import type { ExecutionState } from '../state';

/** The key a message wait (or a boundary, or an event subprocess) waits under, as drawn: variable or FEEL. */
export const keyDrawn = (n: {
  readonly correlationVariable: string | null;
  readonly correlationExpression?: string;
}): string => (n.correlationExpression === undefined ? (n.correlationVariable ?? '') : `=${n.correlationExpression}`);

/** A token's element and the one it would move to, and their ids in the operator's words. */
interface Pair {
  readonly token: ExecutionState;
  readonly from: FlowNode;
  readonly to: FlowNode;
  /** The id of the source element's scope in the target (its mapping, or its own id); undefined at the process level. */
  readonly scope: string | undefined;
}

const job = (n: FlowNode): string | null =>
  n.kind === 'serviceTask' ||
  n.kind === 'sendTask' ||
  n.kind === 'businessRuleTask' ||
  n.kind === 'messageThrowEvent' ||
  n.kind === 'messageEndEvent'
    ? handlerKeyOf(n)
    : null;

/** Why the token may not move from `from` to `to`, or null. */
export function unlike({ token, from, to, scope }: Pair): string | null {
  const at = `token ${token.id} at ${from.id}`;
  if (from.kind !== to.kind)
    return `${at}: ${from.id} is a ${from.kind} and ${to.id} a ${to.kind}; an element never changes kind (map it to a ${from.kind})`;
  if (to.scope !== scope)
    return `${at}: ${to.id} is drawn in ${to.scope ?? 'the process'}, not in ${scope ?? 'the process'}; a token never changes its subprocess`;
  if ((from.loop === undefined) !== (to.loop === undefined))
    return `${at}: one of ${from.id} and ${to.id} is a multi-instance activity and the other is not`;
  if (token.status === 'WAITING_ITEMS') {
    if (from.id !== to.id)
      return `${at}: a multi-instance activity in flight keeps its id (its items run as ${from.id}); ${to.id} differs`;
    if (canonicalJson(from.loop) !== canonicalJson(to.loop))
      return `${at}: the multi-instance characteristics of ${from.id} change; in flight it is migrated only like for like`;
  }
  return waitUnlike(at, token, from, to);
}

/** What the token waits with must stay the same: its job's handler, its message and key, its called process, its event subprocess's trigger. */
function waitUnlike(at: string, token: ExecutionState, from: FlowNode, to: FlowNode): string | null {
  if (token.status === 'WAITING_JOB') {
    if (job(from) !== job(to))
      return `${at}: its job runs the handler ${job(from) ?? '(none)'}, and ${to.id} would run ${job(to) ?? '(none)'}; let the job finish before migrating, or cancel and re-add the token`;
    if (publishedMessage(from) !== publishedMessage(to))
      return `${at}: its job publishes ${publishedMessage(from) ?? '(nothing)'}, and ${to.id} ${publishedMessage(to) ?? '(nothing)'}`;
    if ('async' in from && 'async' in to && from.async !== to.async)
      return `${at}: ${to.id} runs its handler inside the transaction, so no job would take this one on`;
  }
  if (from.kind === 'callActivity' && to.kind === 'callActivity' && from.calledProcess !== to.calledProcess)
    return `${at}: it called ${from.calledProcess}, and ${to.id} calls ${to.calledProcess}; a call in flight is migrated only like for like`;
  if ((from.kind === 'messageCatchEvent' || from.kind === 'receiveTask') && from.kind === to.kind) {
    const wait = to;
    if (from.messageName !== wait.messageName || keyDrawn(from) !== keyDrawn(wait))
      return `${at}: it waits for ${from.messageName} under ${keyDrawn(from)}, and ${to.id} for ${wait.messageName} under ${keyDrawn(wait)}; its waiting point would be filed under the wrong message or key`;
  }
  if (from.kind === 'eventSubProcess' && to.kind === 'eventSubProcess' && token.trigger === true) {
    if (canonicalJson(triggerDrawn(from.trigger)) !== canonicalJson(triggerDrawn(to.trigger)))
      return `${at}: the event subprocess's start changes (${describeTrigger(from.trigger)} to ${describeTrigger(to.trigger)}); its standby subscription is migrated only unchanged`;
  }
  return null;
}

type Trigger = Extract<FlowNode, { kind: 'eventSubProcess' }>['trigger'];

const triggerDrawn = (t: Trigger): unknown =>
  t.kind === 'message'
    ? { kind: t.kind, messageName: t.messageName, key: keyDrawn(t) }
    : t.kind === 'timer'
      ? { kind: t.kind, type: t.timer.type, text: t.timer.text }
      : t;

const describeTrigger = (t: Trigger): string =>
  t.kind === 'message'
    ? `message ${t.messageName} under ${keyDrawn(t)}`
    : t.kind === 'timer'
      ? `timer ${t.timer.text}`
      : t.kind;
