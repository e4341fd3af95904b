import type { UserTaskFilter } from '../queries';
import { completeTask, listUserTasks, readUserTask, TASKS_ORDER, type UserTaskView } from '../operations/user-tasks';
import { RefusedError } from '../operations/refused';
import type { CliContext } from './context';
import { cliActor, operationsDeps } from './operations-deps';
import { print } from './output';
import { parseChoice, parsePageSize, UsageError } from './parse';
import { cursorOf } from './shard-page-query';

/** The flags of `inbox tasks list`. */
export interface TasksListOptions {
  status?: string;
  assignee?: string;
  group?: string;
  instance?: string;
  pageSize?: string;
  after?: string;
}

const STATUSES = ['OPEN', 'COMPLETED', 'CANCELLED'] as const;
const HEADERS = ['task', 'activity', 'name', 'business key', 'assignee', 'groups', 'status', 'since'];

const rowOf = (t: UserTaskView): string[] => [
  t.id,
  t.activityId,
  t.name ?? '',
  t.businessKey,
  t.assignee ?? '',
  t.candidateGroups.join(','),
  t.status,
  t.createdAt,
];

/**
 * `inbox tasks list`: user tasks oldest first, OPEN unless --status says
 * otherwise, of one assignee, one candidate group or one instance at most
 * (each is one indexed query), a page at a time.
 */
export async function tasksListCommand(ctx: CliContext, options: TasksListOptions): Promise<void> {
  const given = (['assignee', 'group', 'instance'] as const).filter((f) => options[f] !== undefined);
  if (given.length > 1)
    throw new UsageError(`--${given.join(' and --')}: give at most one of --assignee, --group and --instance`);
  const filter: UserTaskFilter = {
    status: parseChoice('--status', options.status ?? 'OPEN', STATUSES),
    ...(options.assignee === undefined ? {} : { assignee: options.assignee }),
    ...(options.group === undefined ? {} : { group: options.group }),
    ...(options.instance === undefined ? {} : { instance: options.instance }),
  };
  const size = parsePageSize(options.pageSize ?? '50');
  const page = await listUserTasks(operationsDeps(ctx), filter, { size, after: cursorOf(TASKS_ORDER, options.after) });
  print(ctx, page, HEADERS, page.tasks.map(rowOf));
  if (!ctx.json && page.next !== null) ctx.io.out(`more: add --after ${page.next}`);
}

/** `inbox tasks show ID`: one user task with its form key and, once closed, who closed it and why. */
export async function tasksShowCommand(ctx: CliContext, id: string): Promise<void> {
  const task = await readUserTask(operationsDeps(ctx), id);
  if (task === null) throw new RefusedError(`no user task ${id}`);
  if (ctx.json) return print(ctx, task, [], []);
  const lines: Array<[string, string]> = [
    ['task', task.id],
    ['status', task.status],
    ['activity', `${task.activityId}${task.name === null ? '' : ` (${task.name})`}`],
    ['instance', `${task.processInstanceId} (${task.processKey}, business key ${task.businessKey})`],
    ['token', task.executionId],
    ['assignee', task.assignee ?? '(none)'],
    ['candidate groups', task.candidateGroups.join(', ') || '(none)'],
    ...(task.candidateUsers === undefined
      ? []
      : [['candidate users', task.candidateUsers.join(', ')] as [string, string]]),
    ['form key', task.formKey ?? '(none)'],
    ['created', task.createdAt],
  ];
  if (task.closedAt !== null) lines.push(['closed', task.closedAt]);
  if (task.completedBy !== null)
    lines.push(['completed by', `${task.completedBy} (request ${task.completionRequestId ?? '?'})`]);
  if (task.cancelReason !== null) lines.push(['cancelled', task.cancelReason]);
  for (const [label, value] of lines) ctx.io.out(`${label.padEnd(17)}${value}`);
}

/** The flags of `inbox tasks complete`. */
export interface TasksCompleteOptions {
  vars?: string;
  requestId?: string;
}

/** --vars: a JSON object of variables, or a UsageError that says what is wrong. */
function parseVariables(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `--vars: not JSON (${err instanceof Error ? err.message : String(err)}); write an object such as '{"approved":true}'`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(
      `--vars: a JSON object of variables, not ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`,
    );
  return value as Record<string, unknown>;
}

/**
 * `inbox tasks complete ID [--vars JSON] [--request-id R]`: completes an
 * OPEN user task as the operator (INBOX_OPERATOR or user@host): its
 * variables merged, its token moved on. The same --request-id again answers
 * "already completed"; a task completed by another request, cancelled or
 * left by its token is refused with the reason (exit 1).
 */
export async function tasksCompleteCommand(ctx: CliContext, id: string, options: TasksCompleteOptions): Promise<void> {
  const variables = parseVariables(options.vars);
  if (options.requestId !== undefined && !/^[A-Za-z0-9_-]{1,100}$/.test(options.requestId))
    throw new UsageError('--request-id: letters, digits, - and _, at most 100');
  const done = await completeTask(operationsDeps(ctx), {
    userTaskId: id,
    variables,
    actor: cliActor(ctx.config),
    ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
  });
  print(
    ctx,
    done,
    ['task', 'activity', 'instance', 'status', 'request id'],
    [[done.task.id, done.task.activityId, done.task.processInstanceId, done.status, done.requestId]],
  );
  if (!ctx.json && done.status === 'ALREADY_COMPLETED')
    ctx.io.out('already completed by this request: nothing changed');
}
