/**
 * The user tasks an instance's tokens wait at: a token WAITING_USER links
 * to its OPEN task (the task of that token), where it is completed. Asked
 * only when a token waits at a user task, so an instance without one costs
 * no request more; a failed request leaves the link to the instance's task
 * list and says why.
 */
import type { InstanceView, TokenView } from '../../functions/src/operations/types';
import { api, describe } from './api';
import { h, type Child } from './dom';
import { link } from './router';
import type { UserTask } from './task-types';

export interface TokenTasks {
  /** The OPEN task of each token that has one, by token id. */
  readonly byToken: ReadonlyMap<string, UserTask>;
  /** Why the tasks could not be read; null when they were (or were not needed). */
  readonly failed: string | null;
}

const waitsAtUserTask = (t: TokenView): boolean => t.status === 'WAITING_USER';

export async function tokenTasksOf(v: InstanceView): Promise<TokenTasks> {
  if (!v.tokens.some(waitsAtUserTask)) return { byToken: new Map(), failed: null };
  try {
    const page = await api.openTasksOf(v.row.id);
    return { byToken: new Map(page.tasks.map((t) => [t.executionId, t])), failed: null };
  } catch (err) {
    return { byToken: new Map(), failed: describe(err) };
  }
}

/** The "Waiting for" cell of a token: its message, or its user task as a link. */
export function waitingCell(v: InstanceView, t: TokenView, tasks: TokenTasks): Child {
  if (!waitsAtUserTask(t)) return t.waitingFor ?? '';
  const task = tasks.byToken.get(t.id);
  if (task !== undefined)
    return h(
      'a',
      { href: link.task(task.id), testid: `token-user-task-${t.id}`, 'data-task-id': task.id },
      `user task ${task.name ?? task.activityId}`,
    );
  // Completed or cancelled since the instance was read, or the tasks could not be read: the instance's task list.
  return h(
    'span',
    {},
    h('a', { href: link.tasks({ instance: v.row.id }), testid: `token-user-tasks-${t.id}` }, 'a user task'),
    tasks.failed === null ? null : h('span', { class: 'error' }, ` (the task could not be read: ${tasks.failed})`),
  );
}
