/**
 * GET /api/versions, beside api.ts: the versions of a process for the
 * console's migration view (operations/version-views.ts does the reads).
 * `/api/versions?process=KEY` lists them, with each one's live instances
 * and the elements their tokens are at; `/api/versions/VERSION?process=KEY`
 * is one stored version (its 16 hex digits or a prefix of at least 8) with
 * its XML and elements, or a 404 saying how to list them. Viewers may read.
 */
import type { Request } from '@google-cloud/functions-framework';
import { z } from 'zod';
import type { Answer, Rejection } from '../http/answer';
import { isRefusal } from '../operations/refused';
import type { OperationsDeps } from '../operations/types';
import { processVersions, versionModel } from '../operations/version-views';
import { onlyMethod } from './rejections';

const VersionsQuery = z.object({ process: z.string().min(1).max(1_500) }).strict();
const VERSION_TEXT = /^[0-9a-f]{8,16}$/;

const reject = (status: 400 | 404, error: string): Rejection => ({ kind: 'reject', status, error });

/** Answers GET /api/versions[/VERSION]; `rawVersion` is the path segment after /api/versions; `failed` maps a technical failure to its 5xx (api.ts's). */
export async function answerVersions(
  ops: OperationsDeps,
  req: Request,
  rawVersion: string | undefined,
  failed: (err: unknown, action: string) => Answer,
): Promise<Answer> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return onlyMethod('GET');
  const q = VersionsQuery.safeParse(req.query);
  if (!q.success)
    return reject(400, `${z.prettifyError(q.error)}: give process=KEY, the process whose versions to read`);
  const processKey = q.data.process;
  if (rawVersion !== undefined && !VERSION_TEXT.test(rawVersion))
    return reject(400, `not a version: ${rawVersion} (8 to 16 lowercase hex digits, as /api/versions lists them)`);
  try {
    if (rawVersion === undefined) return { kind: 'ok', body: { ...(await processVersions(ops, processKey)) } };
    return { kind: 'ok', body: { ...(await versionModel(ops, processKey, rawVersion)) } };
  } catch (err) {
    // The only refusal here: no stored version by that name (its message says how to list them).
    if (isRefusal(err)) return reject(404, err instanceof Error ? err.message : String(err));
    return failed(err, `read the versions of ${processKey}`);
  }
}
