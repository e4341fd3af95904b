/**
 * The console's user-task routes, beside api.ts: GET /api/tasks (the list),
 * GET /api/tasks/ID (one task), POST /api/tasks/ID/complete (a person's
 * completion: repairers only, same-origin only, like a repair). Input checks
 * and answers only; operations/user-tasks.ts does the work.
 */
import type { Request } from '@google-cloud/functions-framework';
import { z } from 'zod';
import type { Answer, Rejection } from '../http/answer';
import { parseBody } from '../http/request';
import { InvalidRequestError, isRefusal } from '../operations/refused';
import { pageCursorOf } from '../operations/shard-page-query';
import { completeTask, listUserTasks, readUserTask, TASKS_ORDER } from '../operations/user-tasks';
import type { OperationsDeps } from '../operations/types';
import { type Caller, crossSiteRefusal } from './access';
import { REQUEST_ID } from './console-run';
import { onlyMethod, refusedAnswer } from './rejections';

const text = z.string().min(1).max(1_500);

const TaskQuery = z
  .object({
    status: z.enum(['OPEN', 'COMPLETED', 'CANCELLED']).default('OPEN'),
    assignee: text.optional(),
    group: text.optional(),
    instance: text.optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    after: text.optional(),
  })
  .strict()
  .refine(
    (q) => [q.assignee, q.group, q.instance].filter((v) => v !== undefined).length <= 1,
    'give at most one of assignee, group and instance',
  );

const CompleteBody = z
  .object({
    variables: z.record(z.string(), z.unknown()).default({}),
    requestId: REQUEST_ID.optional(),
  })
  .strict();

const reject = (status: 400 | 403 | 404, error: string): Rejection => ({ kind: 'reject', status, error });

/** Answers a /api/tasks… request; `failed` maps a technical failure to its 5xx (api.ts's). */
export async function answerTasks(
  ops: OperationsDeps,
  req: Request,
  caller: Caller,
  path: { readonly id: string | null; readonly rest: readonly string[] },
  failed: (err: unknown, action: string) => Answer,
): Promise<Answer> {
  const { id, rest } = path;
  const completing = id !== null && rest.length === 1 && rest[0] === 'complete';
  if (rest.length > 0 && !completing)
    return reject(404, 'no such route: /api/tasks, /api/tasks/ID, POST /api/tasks/ID/complete');
  if (completing) {
    if (req.method !== 'POST') return onlyMethod('POST');
    return complete(ops, req, caller, id, failed);
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return onlyMethod('GET');
  try {
    if (id !== null) {
      const task = await readUserTask(ops, id);
      return task === null ? reject(404, `no user task ${id}`) : { kind: 'ok', body: { ...task } };
    }
    const q = TaskQuery.safeParse(req.query);
    if (!q.success) return reject(400, z.prettifyError(q.error));
    const { status, assignee, group, instance, limit, after } = q.data;
    const cursor = after === undefined ? null : pageCursorOf(TASKS_ORDER, after);
    if (after !== undefined && cursor === null)
      return reject(
        400,
        `after: expected the \`next\` a previous page of /api/tasks gave, got ${JSON.stringify(after)}`,
      );
    const filter = {
      status,
      ...(assignee === undefined ? {} : { assignee }),
      ...(group === undefined ? {} : { group }),
      ...(instance === undefined ? {} : { instance }),
    };
    return { kind: 'ok', body: { ...(await listUserTasks(ops, filter, { size: limit, after: cursor })) } };
  } catch (err) {
    if (isRefusal(err)) return refusedAnswer(err.message);
    return failed(err, 'read user tasks');
  }
}

/**
 * POST /api/tasks/ID/complete: a refusal (completed by another request,
 * cancelled, gone, variables that would take the instance's over their
 * bound) is a 409 with the reason, never a 5xx; variables Firestore could
 * not store or over the bounds themselves a 400 naming the path, as
 * startProcess answers them (both `refused`: nothing changed).
 */
async function complete(
  ops: OperationsDeps,
  req: Request,
  caller: Caller,
  id: string,
  failed: (err: unknown, action: string) => Answer,
): Promise<Answer> {
  if (caller.role !== 'repairer')
    return reject(
      403,
      `${caller.id} may view but not complete tasks: completing needs the repairer role (INBOX_CONSOLE_REPAIRERS)`,
    );
  const crossSite = crossSiteRefusal(req);
  if (crossSite !== null) return crossSite;
  const body = parseBody(req, CompleteBody);
  if (!body.ok) return body.answer;
  try {
    const done = await completeTask(ops, {
      userTaskId: id,
      variables: body.value.variables,
      actor: { id: caller.id, via: 'console' },
      ...(body.value.requestId === undefined ? {} : { requestId: body.value.requestId }),
    });
    return { kind: 'ok', body: { ...done } };
  } catch (err) {
    if (err instanceof InvalidRequestError) return { ...refusedAnswer(err.message), status: 400 };
    if (isRefusal(err)) return refusedAnswer(err.message);
    return failed(err, `complete user task ${id}`);
  }
}
