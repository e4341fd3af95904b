/**
 * How a user task is stored and completed: `userTasks/{id}` holds the
 * UserTaskState plus `expireAt` once it is closed (docs/data-model.md,
 * userTasks). Created OPEN in the transaction in which its token arrives;
 * completed in one transaction with the token's move (complete-user-task.ts);
 * cancelled in the one in which the token leaves without it. A closed task
 * stays a record for {@link CLOSED_TASK_RETENTION_MS}, so a repeated
 * completion gets its answer.
 */
import type { ClosedUserTask, UserTaskState } from '../state';
import { plain, refs } from './collections';
import type { UnitOfWork } from './unit-of-work';

const DAY_MS = 24 * 60 * 60 * 1000;

/** How long a completed or cancelled user task is kept (the TTL policy on `userTasks.expireAt` removes it then). */
export const CLOSED_TASK_RETENTION_MS = 30 * DAY_MS;

/** The stored document of a user task: closed ones carry their TTL field. */
export function userTaskDoc(task: UserTaskState): Record<string, unknown> {
  const expireAt =
    task.closedAt === null ? {} : { expireAt: new Date(task.closedAt.getTime() + CLOSED_TASK_RETENTION_MS) };
  return { ...plain(task), ...expireAt };
}

/** The engine's view of a stored user task (the TTL field stays in the store). */
export function asUserTask(data: Record<string, unknown>): UserTaskState {
  const task = { ...data };
  delete task.expireAt;
  return task as unknown as UserTaskState;
}

/** Writes a transition's user tasks: the new ones OPEN, the ones their token left CANCELLED with the reason. */
export async function writeUserTasks(
  uow: UnitOfWork,
  opened: readonly UserTaskState[],
  closed: readonly ClosedUserTask[],
  now: Date,
): Promise<void> {
  for (const task of opened) uow.set(refs.userTask(uow.db, task.id), userTaskDoc(task));
  for (const { id, reason } of closed) {
    const data = await uow.get(refs.userTask(uow.db, id));
    if (data === undefined) continue;
    const task = asUserTask(data);
    if (task.status !== 'OPEN') continue;
    uow.set(
      refs.userTask(uow.db, id),
      userTaskDoc({ ...task, status: 'CANCELLED', closedAt: now, cancelReason: reason }),
    );
  }
}
