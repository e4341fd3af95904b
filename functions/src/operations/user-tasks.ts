/**
 * User tasks as people and operators see them: the list (`inbox tasks list`,
 * the console's task list), one task, and its completion (`inbox tasks
 * complete`, POST /api/tasks/ID/complete). The store keeps them in
 * `userTasks/{id}` (engine/store/user-tasks.ts).
 */
import { randomUUID } from 'node:crypto';
import { resultInto } from '../engine/expressions';
import type { UserTaskState } from '../engine/state';
import { refs } from '../engine/store/collections';
import { completeUserTaskRun, type UserTaskOutcome } from '../engine/store/complete-user-task';
import { modelOutside } from '../engine/store/versions';
import { asUserTask } from '../engine/store/user-tasks';
import { mergedVariablesProblem, variablesProblem } from '../process/variables';
import { type PageCursor, QUERIES, type UserTaskFilter } from '../queries';
import { dispatchAfterRepair } from './dispatch-after-repair';
import { view } from './documents';
import { InvalidRequestError, RefusedError } from './refused';
import { formatCursor, type ShardedOrder } from './shard-page';
import { positionOf } from './shard-page-query';
import type { Actor, OperationsDeps } from './types';

/** `inbox tasks list`: user tasks, oldest first (one query, no shards: people create tasks slowly). */
export const TASKS_ORDER: ShardedOrder = { list: 'tasks list', collection: 'userTasks', field: 'createdAt' };

/** A user task as the list and `inbox tasks show` print it: the stored task, dates as ISO text. */
export type UserTaskView = Omit<UserTaskState, 'createdAt' | 'closedAt'> & {
  readonly createdAt: string;
  readonly closedAt: string | null;
};

export interface UserTaskPage {
  readonly tasks: readonly UserTaskView[];
  /** The cursor of the next page, null on the last. */
  readonly next: string | null;
}

const iso = (value: unknown): string | null => (value instanceof Date ? value.toISOString() : null);

function viewOf(data: Record<string, unknown>): UserTaskView {
  const task = asUserTask(data);
  return { ...task, createdAt: iso(task.createdAt) ?? '', closedAt: iso(task.closedAt) };
}

/** One page of user tasks after a cursor (pageCursorOf(TASKS_ORDER, text) of a previous page's `next`). */
export async function listUserTasks(
  deps: OperationsDeps,
  filter: UserTaskFilter,
  page: { readonly size: number; readonly after: PageCursor | null },
): Promise<UserTaskPage> {
  const snaps = (await QUERIES.userTasks.build(deps.db(), filter, page.after, page.size + 1).get()).docs;
  const shown = snaps.slice(0, page.size);
  const last = shown.at(-1);
  return {
    tasks: shown.map((s) => viewOf(view(s))),
    next:
      snaps.length > page.size && last !== undefined ? formatCursor(TASKS_ORDER, positionOf(TASKS_ORDER, last)) : null,
  };
}

/** One user task, or null. */
export async function readUserTask(deps: OperationsDeps, id: string): Promise<UserTaskView | null> {
  const snap = await refs.userTask(deps.db(), id).get();
  return snap.exists ? viewOf(view(snap)) : null;
}

/** What a completion request says: the task, the variables, who, and the request id that makes a repeat the same completion. */
export interface CompleteTaskRequest {
  readonly userTaskId: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly actor: Actor;
  /** Default: a new one (the request is then not repeatable). */
  readonly requestId?: string;
}

export interface CompletedTask {
  /** COMPLETED: this request moved the token; ALREADY_COMPLETED: the same request again, nothing changed. */
  readonly status: 'COMPLETED' | 'ALREADY_COMPLETED';
  readonly task: UserTaskView;
  readonly requestId: string;
  /** New jobs and timers dispatched to Cloud Tasks after the commit (the sweep dispatches any not sent here). */
  readonly dispatched: number;
}

/** What a refusal of a completion's variables adds: nothing was written, and what to do. */
const STAYS_OPEN = 'the task stays OPEN and its instance unchanged';
const FIX_VALUE = `${STAYS_OPEN}: correct what it names and complete it again`;
const FIX_SIZE = `${STAYS_OPEN}: complete it with smaller variables (a reference to a large document, not the document)`;

/**
 * startProcess's door checks (process/variables.ts) on a completion, before
 * its transaction: its variables themselves (size, values, depth, keys
 * Firestore reserves, lone surrogates: an InvalidRequestError, the same
 * whatever the state), then the instance's variables as the completion
 * would leave them (with the task's output mappings, as the engine merges
 * them: a RefusedError, since the same completion may fit another
 * instance). The merge is read outside the transaction, so a job's result
 * merged in between is not counted: the bound is a sixteenth of the
 * document, a margin that covers it, and the check is there to refuse
 * completions that could never fit, not to police the last byte.
 */
async function checkCompletion(deps: OperationsDeps, request: CompleteTaskRequest): Promise<void> {
  const own = variablesProblem(request.variables);
  if (own !== null) throw new InvalidRequestError(`user task ${request.userTaskId}: ${own}; ${FIX_VALUE}`);
  const db = deps.db();
  const snap = await refs.userTask(db, request.userTaskId).get();
  // Unknown, completed or cancelled: the transaction answers that (a repeat of this very request included).
  if (!snap.exists) return;
  const task = asUserTask(view(snap));
  if (task.status !== 'OPEN') return;
  const [instance] = await db.getAll(refs.instance(db, task.processInstanceId), {
    fieldMask: ['processKey', 'processVersion', 'variables'],
  });
  if (instance?.exists !== true) return;
  const before = (instance.get('variables') ?? {}) as Readonly<Record<string, unknown>>;
  const engine = await deps.engine();
  const processKey = String(instance.get('processKey'));
  // The task as the instance's own version draws it.
  const model =
    engine.deployed(processKey) === null
      ? null
      : await modelOutside(db, engine, { processKey, processVersion: String(instance.get('processVersion')) });
  const merged = resultInto(model?.nodes[task.activityId]?.io, before, request.variables, task.activityId);
  // A mapping that fails is the engine's to report (an incident at the task), as for any completion.
  if (!('values' in merged)) return;
  const problem = mergedVariablesProblem(before, merged.values);
  if (problem !== null)
    throw new RefusedError(`user task ${request.userTaskId} (${task.activityId}): ${problem}; ${FIX_SIZE}`);
}

/**
 * Completes a user task (one transaction; engine/store/complete-user-task.ts),
 * then dispatches the jobs and timers its move created. Refused (a
 * RefusedError saying why) for an unknown task, one completed by another
 * request, one cancelled, or one whose token left it; and for variables
 * startProcess would refuse, alone or merged with the instance's
 * ({@link checkCompletion}), before anything is written.
 */
export async function completeTask(deps: OperationsDeps, request: CompleteTaskRequest): Promise<CompletedTask> {
  await checkCompletion(deps, request);
  const requestId = request.requestId ?? randomUUID();
  const outcome: UserTaskOutcome = await completeUserTaskRun(
    deps.db(),
    await deps.engine(),
    { userTaskId: request.userTaskId, variables: request.variables, by: request.actor.id, requestId },
    deps.now(),
  );
  if (outcome.kind === 'NOT_FOUND') throw new RefusedError(`no user task ${request.userTaskId}`);
  if (outcome.kind === 'REFUSED')
    throw new RefusedError(`user task ${request.userTaskId} (${outcome.task.activityId}) is ${outcome.reason}`);
  const sent = await dispatchAfterRepair(deps, outcome, deps.log);
  if (outcome.kind === 'COMPLETED')
    deps.log.info('user task completed', {
      userTaskId: request.userTaskId,
      activityId: outcome.task.activityId,
      processInstanceId: outcome.task.processInstanceId,
      by: request.actor.id,
      via: request.actor.via,
      requestId,
    });
  return {
    status: outcome.kind,
    task: viewOf({ ...outcome.task }),
    requestId,
    dispatched: sent.dispatched + sent.timersDispatched,
  };
}
