import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { z } from 'zod';
import { classifyFailure } from '../core/errors';
import type { Engine } from '../engine/engine';
import { startProcessInstance } from '../engine/store/operations';
import { dispatchJobs, logDuplicates } from '../jobs/dispatch';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';

export interface StartProcessDeps {
  readonly db: () => Firestore;
  readonly engine: () => Promise<Engine>;
  readonly queue: () => JobQueue;
  readonly log: Logger;
  readonly now: () => Date;
}

/** Firestore field names: not empty, not `__x__` (reserved); depth bounded well below Firestore's 20. */
const MAX_DEPTH = 10;
function variablesProblem(value: unknown, depth = 0, path = 'variables'): string | null {
  if (depth > MAX_DEPTH) return `${path} is nested deeper than ${MAX_DEPTH} levels`;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const problem = variablesProblem(item, depth + 1, `${path}[${i}]`);
      if (problem !== null) return problem;
    }
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  for (const key of Object.keys(value)) {
    if (key === '' || /^__.*__$/.test(key)) return `${path} has the key ${JSON.stringify(key)}, which Firestore does not allow`;
    const problem = variablesProblem((value as Record<string, unknown>)[key], depth + 1, `${path}.${key}`);
    if (problem !== null) return problem;
  }
  return null;
}

const Body = z.object({
  processKey: z.string().min(1).max(256),
  businessKey: z.string().trim().min(1).max(256),
  variables: z.record(z.string(), z.unknown()).default({}),
});

/**
 * `startProcess`: starts a process instance, idempotent by (process key,
 * business key): a second start answers 200 with the existing instance and
 * creates no second token. Bad input: 400 with the reason.
 */
export function createStartProcessHandler(deps: StartProcessDeps): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'POST') {
      res.status(405).json({ error: 'use POST with {processKey, businessKey, variables}' });
      return;
    }
    const parsed = Body.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: z.prettifyError(parsed.error) });
      return;
    }
    // zod's record parser drops a "__proto__" key; check the raw body so it is refused, not lost.
    const problem = variablesProblem((req.body as { variables?: unknown }).variables ?? {});
    if (problem !== null) {
      res.status(400).json({ error: problem });
      return;
    }
    const { processKey, businessKey, variables } = parsed.data;
    try {
      const engine = await deps.engine();
      if (engine.find(processKey) === null) {
        res.status(400).json({ error: `unknown processKey ${JSON.stringify(processKey)}; deployed: ${engine.processKeys.join(', ')}` });
        return;
      }
      const started = await startProcessInstance(deps.db(), engine, { processKey, businessKey, variables, now: deps.now() });
      logDuplicates(deps.log, started.duplicates);
      await dispatchJobs(deps.queue(), started.jobs, deps.log);
      const { instance } = started;
      deps.log.info(started.created ? 'process started' : 'process already started', { processInstanceId: instance.id, processKey, businessKey });
      res.status(started.created ? 201 : 200).json({ processInstanceId: instance.id, created: started.created, status: instance.status });
    } catch (err) {
      const failure = classifyFailure(err);
      deps.log.error('could not start the process', { processKey, businessKey, code: failure.code, error: err instanceof Error ? err.message : String(err) });
      res.status(failure.kind === 'retryable' ? 503 : 500).json({ error: 'could not start the process', retry: true });
    }
  };
}
