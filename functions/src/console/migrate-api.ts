/**
 * POST /api/migrations, beside api.ts: `inbox migrate` for the console
 * (operations/migrate.ts does the work). A preview (`preview: true`)
 * answers each instance's moves or refusal and the `expect` line; the run
 * sends that line back and is held to it, instance by instance. Repairers
 * only, same-origin only, like a repair; a refusal of the whole run (a
 * version not stored, a mapping that names no element) is a 409 with its
 * reason, a refused instance is part of the 200 answer.
 */
import type { Request } from '@google-cloud/functions-framework';
import { z } from 'zod';
import { parseMigrationExpect } from '../engine/migration/expect';
import type { Answer, Rejection } from '../http/answer';
import { parseBody } from '../http/request';
import { migrateInstances } from '../operations/migrate';
import { isRefusal } from '../operations/refused';
import type { OperationsDeps } from '../operations/types';
import { type Caller, crossSiteRefusal } from './access';
import { consoleRun, REQUEST_ID } from './console-run';
import { refusedAnswer } from './rejections';

const id = z.string().min(1).max(1_500);

const MigrationBody = z
  .object({
    processKey: id,
    from: id,
    to: id,
    /** Source element id → target element id. */
    mapping: z.record(id, id).default({}),
    instances: z.union([z.literal('all'), z.array(id).min(1).max(500)]),
    preview: z.boolean(),
    requestId: REQUEST_ID.optional(),
    /** The preview's `expect` line; required when `preview` is false. */
    expect: z.string().max(2_000_000).optional(),
  })
  .strict();

const reject = (status: 400 | 403, error: string): Rejection => ({ kind: 'reject', status, error });

/** Answers POST /api/migrations; `failed` maps a technical failure to its 5xx (api.ts's). */
export async function answerMigration(
  ops: OperationsDeps,
  req: Request,
  caller: Caller,
  failed: (err: unknown, action: string) => Answer,
): Promise<Answer> {
  if (caller.role !== 'repairer')
    return reject(
      403,
      `${caller.id} may view but not migrate: migrating needs the repairer role (INBOX_CONSOLE_REPAIRERS)`,
    );
  const crossSite = crossSiteRefusal(req);
  if (crossSite !== null) return crossSite;
  const body = parseBody(req, MigrationBody);
  if (!body.ok) return body.answer;
  const { preview, requestId, expect: line, ...run } = body.value;
  const expect = line === undefined ? undefined : parseMigrationExpect(line);
  if (expect === null) return reject(400, 'expect: send back the `expect` line the preview answered');
  if (!preview && expect === undefined)
    return reject(400, 'expect: a migration runs only as its preview showed it: preview first, then send its `expect`');
  try {
    const outcome = await migrateInstances(ops, run, consoleRun(caller, { preview, requestId, expect }));
    return { kind: 'ok', body: { ...outcome } };
  } catch (err) {
    if (isRefusal(err)) return refusedAnswer(err.message);
    return failed(err, `migrate instances of ${run.processKey}`);
  }
}
