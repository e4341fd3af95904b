/**
 * What the console's diagram shows on each BPMN element of an instance:
 * pure, from the instance's parts as the operations module returns them.
 */
import type { CallView, ElementOverlay, IncidentView, TimerView, TokenView } from './types';

/** A waiting point of the instance: the element where a token waits for a message (a receive task, a catch event after an event gateway). */
export interface WaitingAt {
  readonly activityId: string;
}

/** Tokens that have not ended: a finished token (kept for the record) puts nothing on the diagram. */
const FINISHED = new Set(['ENDED', 'CANCELLED']);

/**
 * Per element: its live tokens, open waiting points, PENDING timers and
 * open incidents (an incident without an activity shows nowhere; a called
 * instance's open incidents show on the call activity). Elements
 * with nothing on them are left out; the rest in activity-id order, so the
 * same instance always gives the same list.
 */
export function overlaysOf(
  tokens: readonly TokenView[],
  timers: readonly TimerView[],
  incidents: readonly IncidentView[],
  waiting: readonly WaitingAt[],
  calls: readonly CallView[] = [],
): ElementOverlay[] {
  const byId = new Map<string, { tokens: number; waiting: number; timers: number; incidents: number }>();
  const at = (activityId: string): { tokens: number; waiting: number; timers: number; incidents: number } => {
    let o = byId.get(activityId);
    if (o === undefined) byId.set(activityId, (o = { tokens: 0, waiting: 0, timers: 0, incidents: 0 }));
    return o;
  };
  for (const t of tokens) if (!FINISHED.has(t.status)) at(t.activityId).tokens += 1;
  for (const w of waiting) at(w.activityId).waiting += 1;
  for (const t of timers) if (t.status === 'PENDING') at(t.activityId).timers += 1;
  for (const i of incidents) if (i.resolvedAt === null && i.activityId !== null) at(i.activityId).incidents += 1;
  for (const c of calls) if (c.openIncidents.length > 0) at(c.activityId).incidents += c.openIncidents.length;
  return [...byId.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([activityId, o]) => ({ activityId, ...o }));
}
