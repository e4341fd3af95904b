/**
 * Repair: deciding whether an operator may close an instance's incidents.
 * Pure, like the rest of the core (transitions.ts).
 */
import { type ExecutionState, type InstanceState, isOpenIncident, type JobState, type WaitingPoint } from './state';

/** What deciding on an instance's incidents needs: the store reads it by id. */
export interface IncidentState {
  readonly instance: InstanceState;
  /** The instance's active tokens (those of `activeExecutionIds` that exist). */
  readonly executions: readonly ExecutionState[];
  /** The job each WAITING_JOB token waits for, by job id. */
  readonly jobs: Readonly<Record<string, JobState>>;
  /** The waiting points stored for each key a WAITING_MESSAGE token waits under, by key. */
  readonly waiting: Readonly<Record<string, readonly WaitingPoint[]>>;
}

export type IncidentResolution =
  | { readonly kind: 'RESOLVED'; readonly instance: InstanceState; readonly resolved: number }
  | { readonly kind: 'REFUSED'; readonly causes: readonly string[] };

/** Why an active token still needs a repair, or null. */
function causeAt(state: IncidentState, execution: ExecutionState): string | null {
  if (execution.status === 'ACTIVE')
    return `token ${execution.id} is stopped at ${execution.activityId}: move or cancel it`;
  if (
    execution.status === 'WAITING_JOB' &&
    execution.jobId !== null &&
    state.jobs[execution.jobId]?.status === 'FAILED'
  ) {
    return `token ${execution.id} waits at ${execution.activityId} for FAILED job ${execution.jobId}: move the token onto the step to re-run it, or cancel it`;
  }
  if (execution.status === 'WAITING_ITEMS' && execution.items?.conditionFailed !== undefined)
    return `token ${execution.id} waits at multi-instance ${execution.activityId}, whose completion condition failed (${execution.items.conditionFailed}): it can never finish by itself; move the token (onto ${execution.activityId} to run its items again, or past it) or cancel it`;
  if (execution.status === 'WAITING_MESSAGE' && execution.waitingFor !== null) {
    const { messageName, correlationKey } = execution.waitingFor;
    const others = (state.waiting[correlationKey] ?? []).filter(
      (w) => w.messageName === messageName && w.executionId !== execution.id,
    );
    if (others.length > 0) {
      const names = others.map((w) => `${w.executionId} of ${w.processInstanceId}`).join(', ');
      return `token ${execution.id} waits for ${messageName} with key ${correlationKey}, and so does ${names}: cancel one`;
    }
  }
  return null;
}

/**
 * Repair: an operator declares an instance's incidents resolved. Refused
 * while a cause persists: a token stopped by an incident (ACTIVE), a token
 * waiting for a FAILED job, a multi-instance activity whose completion
 * condition failed, a token sharing its waiting point's message and key
 * with another. Otherwise every open incident gets `resolvedAt` and the
 * note, and the instance is RUNNING again, or COMPLETED if no token is left
 * (its last token ended while it was INCIDENT).
 */
export function resolveIncidents(state: IncidentState, note: string | null, now: Date): IncidentResolution {
  const { instance } = state;
  const open = instance.incidents.filter(isOpenIncident).length;
  if (open === 0 && instance.status !== 'INCIDENT')
    return { kind: 'REFUSED', causes: [`instance ${instance.id} has no open incident`] };
  const causes = state.executions.map((e) => causeAt(state, e)).filter((c): c is string => c !== null);
  if (causes.length > 0) return { kind: 'REFUSED', causes };
  const done = instance.activeExecutionIds.length === 0;
  return {
    kind: 'RESOLVED',
    resolved: open,
    instance: {
      ...instance,
      incidents: instance.incidents.map((i) => (isOpenIncident(i) ? { ...i, resolvedAt: now, resolution: note } : i)),
      resolvedIncidents: (instance.resolvedIncidents ?? 0) + open,
      status: done ? 'COMPLETED' : 'RUNNING',
      completedAt: done ? (instance.completedAt ?? now) : null,
      updatedAt: now,
    },
  };
}
