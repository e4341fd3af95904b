/**
 * The user tasks of the console's JSON API (functions/src/console/tasks-api.ts),
 * as the page reads them. Written out here because the page takes types only
 * from operations/types.ts; test/unit/console-tasks.test.ts holds them to
 * operations/user-tasks.ts, so a field added or dropped there fails the unit
 * tests rather than a browser.
 */

export type UserTaskStatus = 'OPEN' | 'COMPLETED' | 'CANCELLED';

/** A user task (`UserTaskView`): the stored task, times as ISO text. */
export interface UserTask {
  readonly id: string;
  readonly processInstanceId: string;
  readonly processKey: string;
  readonly businessKey: string;
  /** The token waiting at the task. */
  readonly executionId: string;
  /** The userTask element. */
  readonly activityId: string;
  /** The element's name; null when unnamed. */
  readonly name: string | null;
  readonly step: number;
  readonly assignee: string | null;
  readonly candidateGroups: readonly string[];
  /** A Camunda 8 model's candidate users, as written; absent when none. */
  readonly candidateUsers?: readonly string[];
  /** Which form a task list would show: text to the console, never fetched. */
  readonly formKey: string | null;
  readonly status: UserTaskStatus;
  readonly createdAt: string;
  /** When it was completed or cancelled; null while OPEN. */
  readonly closedAt: string | null;
  readonly completedBy: string | null;
  readonly completionRequestId: string | null;
  readonly cancelReason: string | null;
}

/** GET /api/tasks: a page, the oldest first; `next` is the cursor of the following page, null on the last. */
export interface UserTaskPage {
  readonly tasks: readonly UserTask[];
  readonly next: string | null;
}

/** POST /api/tasks/ID/complete (`CompletedTask`): this request completed it, or it is the same request again. */
export interface TaskCompletion {
  readonly status: 'COMPLETED' | 'ALREADY_COMPLETED';
  readonly task: UserTask;
  readonly requestId: string;
  /** Jobs and timers dispatched after the commit. */
  readonly dispatched: number;
}

/** The filters of the task list (the API takes at most one of assignee, group and instance). */
export interface TaskQuery {
  readonly status?: string;
  readonly assignee?: string;
  readonly group?: string;
  readonly instance?: string;
}
