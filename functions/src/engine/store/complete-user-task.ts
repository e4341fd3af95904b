/** Completing a user task: one transaction, idempotent by the request id (user-tasks.ts: how tasks are stored). */
import { computeStep } from '../../core/errors';
import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import type { UserTaskState } from '../state';
import { completeUserTask, type Completion } from '../transitions';
import { applyAndSettle, NOTHING_SETTLED, type Settled } from './apply';
import { refs } from './collections';
import { readInstanceDoc } from './instance-doc';
import { runUnitOfWork, type UnitStats } from './unit-of-work';
import { asUserTask, userTaskDoc } from './user-tasks';
import { modelOf } from './versions';

/** A completion request: the task, the variables to merge, who and which request. */
export interface UserTaskCompletion extends Completion {
  readonly userTaskId: string;
  readonly variables: Readonly<Record<string, unknown>>;
}

/**
 * What a completion did. COMPLETED moved the token (dispatch the Settled's
 * jobs and timers after the commit); ALREADY_COMPLETED is this very request
 * again (nothing changed). The refusals change nothing but a task whose
 * token left it unnoticed, which is closed CANCELLED on the way.
 */
export type UserTaskOutcome =
  | (Settled & { readonly kind: 'COMPLETED' | 'ALREADY_COMPLETED'; readonly task: UserTaskState })
  | { readonly kind: 'NOT_FOUND' }
  | { readonly kind: 'REFUSED'; readonly task: UserTaskState; readonly reason: string };

/**
 * Completes a user task in one transaction: reads the task, its instance
 * document (tokens in it), moves the token on and writes the task
 * COMPLETED. Idempotent by `requestId`: the same request again answers
 * ALREADY_COMPLETED; another request for a closed task is REFUSED with who
 * closed it when and why.
 */
export async function completeUserTaskCounted(
  db: Firestore,
  engine: Engine,
  request: UserTaskCompletion,
  now: Date,
): Promise<{ result: UserTaskOutcome; stats: UnitStats }> {
  return runUnitOfWork(db, async (uow): Promise<UserTaskOutcome> => {
    const data = await uow.get(refs.userTask(db, request.userTaskId));
    if (data === undefined) return { kind: 'NOT_FOUND' };
    const task = asUserTask(data);
    if (task.status === 'COMPLETED') {
      if (task.completionRequestId === request.requestId)
        return { ...NOTHING_SETTLED, kind: 'ALREADY_COMPLETED', task };
      return {
        kind: 'REFUSED',
        task,
        reason: `already completed by ${task.completedBy ?? 'someone'} at ${task.closedAt?.toISOString() ?? '?'}`,
      };
    }
    if (task.status === 'CANCELLED') return { kind: 'REFUSED', task, reason: `cancelled: ${task.cancelReason ?? '?'}` };
    const doc = await readInstanceDoc(uow, task.processInstanceId);
    const execution = doc?.tokens[task.executionId];
    if (
      doc === null ||
      execution === undefined ||
      execution.status !== 'WAITING_USER' ||
      execution.userTaskId !== task.id
    ) {
      const reason = 'its token no longer waits at the task';
      uow.set(
        refs.userTask(db, task.id),
        userTaskDoc({ ...task, status: 'CANCELLED', closedAt: now, cancelReason: reason }),
      );
      return { kind: 'REFUSED', task, reason: `cancelled: ${reason}` };
    }
    const model = await modelOf(uow, engine, doc.instance);
    const t = computeStep(`completing user task ${task.id} at ${task.activityId}`, () =>
      completeUserTask(
        model,
        engine.sync,
        { instance: doc.instance, execution, userTask: task, tokens: doc.tokens },
        request.variables,
        request,
        now,
      ),
    );
    uow.set(refs.userTask(db, task.id), userTaskDoc(t.userTask));
    return { ...(await applyAndSettle(uow, engine, t, now)), kind: 'COMPLETED', task: t.userTask };
  });
}

/** {@link completeUserTaskCounted} without the counts. */
export async function completeUserTaskRun(
  db: Firestore,
  engine: Engine,
  request: UserTaskCompletion,
  now: Date,
): Promise<UserTaskOutcome> {
  return (await completeUserTaskCounted(db, engine, request, now)).result;
}
