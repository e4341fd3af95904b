/**
 * Call activities on an instance's page: the instance that called this one
 * (its caller, a link), and for a token waiting at a call activity the
 * instance it called, with its status and open incidents (a link). The
 * incidents also count on the call activity's badge in the diagram.
 */
import type { InstanceView, TokenView } from '../../functions/src/operations/types';
import { type Child, h } from './dom';
import { link } from './router';

/** `, called by INSTANCE at ACTIVITY` for a called instance; nothing for a top-level one. */
export function calledByFacts(v: InstanceView): Child[] {
  if (v.calledBy === null) return [];
  return [
    ', called by ',
    h('a', { href: link.instance(v.calledBy.instanceId), testid: 'called-by' }, v.calledBy.instanceId),
    ` at ${v.calledBy.activityId}`,
  ];
}

/** The "waiting for" cell of a token at a call activity: the called instance, or null for any other token. */
export function callCell(v: InstanceView, t: TokenView): Child | null {
  if (t.calledInstanceId === null) return null;
  const call = v.calls.find((c) => c.executionId === t.id);
  const incidents = call?.openIncidents.length ?? 0;
  const state =
    call?.status === null || call === undefined
      ? 'gone'
      : `${call.status}${incidents > 0 ? `, ${incidents} open incident${incidents === 1 ? '' : 's'}` : ''}`;
  return h(
    'a',
    {
      href: link.instance(t.calledInstanceId),
      testid: `token-call-${t.id}`,
      class: incidents > 0 ? 'alert' : undefined,
    },
    `called instance ${call?.processKey ?? t.calledInstanceId} (${state})`,
  );
}
