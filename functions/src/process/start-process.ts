import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { classifyFailure, errorMessage } from '../core/errors';
import type { ProcessModel } from '../bpmn/model';
import type { Engine } from '../engine/engine';
import { startProcessInstance } from '../engine/store/start-instance';
import { type Answer, answering, failureAnswer, RETRY_AFTER_SECONDS } from '../http/answer';
import { parseBody, refuseMethod } from '../http/request';
import { dispatchSettled, logDuplicates } from '../jobs/dispatch';
import type { Logger } from '../log';
import { hasLoneSurrogate } from '../receiver/envelope';
import type { JobQueue } from '../tasks/job-queue';
import { correlationProblem, timerProblem, variablesProblem } from './variables';

/** What startProcess needs, passed in (tests build their own); startProcessFunction (wiring.ts) builds it from the configuration. */
export interface StartProcessDeps {
  /** The Firestore client, created on the first call (keeps the SDK out of the cold start). */
  readonly db: () => Firestore;
  /** The deployed models, loaded on the first request; a processKey none of them has is answered 400. */
  readonly engine: () => Promise<Engine>;
  /**
   * The jobs queue (INBOX_TASKS_QUEUE, tasks POSTed to runJob). A start that
   * reaches an async task dispatches its job after the commit; if that fails
   * the job stays PENDING and sweepJobs dispatches it. Locally the Cloud
   * Tasks emulator (INBOX_TASKS_EMULATOR_HOST) must have the queue: the local
   * stack creates it.
   */
  readonly queue: () => JobQueue;
  /**
   * The timers queue (INBOX_TIMERS_QUEUE, tasks POSTed to fireTimer at their
   * due time): a start that reaches a timer dispatches its task after the
   * commit; if that fails the sweep fires the timer once it is overdue.
   */
  readonly timerQueue: () => JobQueue;
  /** JSON lines on stdout for Cloud Logging, tagged with the function; the log-based metrics and alerts read their fields. */
  readonly log: Logger;
  /** The clock of the instance's createdAt and of its first transition. */
  readonly now: () => Date;
}

const Body = z.object({
  processKey: z.string().min(1).max(256),
  businessKey: z.string().trim().min(1).max(256),
  variables: z.record(z.string(), z.unknown()).default({}),
});

/**
 * `startProcess`: starts a process instance, idempotent by (process key,
 * business key): a second start answers 200 with the existing instance and
 * creates no second token. Bad input: 400 with the reason, before anything
 * is written: a body of the wrong shape, variables Firestore cannot store or
 * beyond our bounds (variables.ts), a correlation variable of the model
 * missing or of a kind the engine cannot wait under. A process that starts
 * by message only (no none start event): 422, naming its message start
 * events. 503 (`retry: true`,
 * `Retry-After`) only when a retry can heal it; any other failure is a
 * defect: 500, `retry: false`, logged at ERROR (http/answer.ts).
 */
export function createStartProcessHandler(deps: StartProcessDeps): (req: Request, res: Response) => Promise<void> {
  return answering((req) => startProcess(deps, req));
}

/**
 * 422 for a process without a none start event: it starts by message only.
 * Not 400: the request is well formed and names a deployed process; what it
 * asks, starting that process here, the model does not allow, and no other
 * body would change that (publishing its start message would). A status of
 * its own keeps these apart from malformed requests in Cloud Run's request
 * metrics, where a deploy that turned a process message-only shows at once.
 */
function messageOnly(model: ProcessModel): Answer {
  const starts = Object.entries(model.messageStartEvents).map(([messageName, id]) => ({ id, messageName }));
  const named = starts.map((s) => `${s.id} (message ${s.messageName})`).join(', ');
  return {
    kind: 'reject',
    status: 422,
    error: `process ${model.key} has no none start event: it starts by message only, at ${named}; publish that message (its correlation key becomes the business key) instead of calling startProcess`,
    details: { processKey: model.key, messageStartEvents: starts },
  };
}

async function startProcess(deps: StartProcessDeps, req: Request): Promise<Answer> {
  const wrongMethod = refuseMethod(req, 'use POST with {processKey, businessKey, variables}');
  if (wrongMethod !== null) return wrongMethod;
  const parsed = parseBody(req, Body);
  if (!parsed.ok) return parsed.answer;
  const { processKey, businessKey, variables } = parsed.value;
  // Firestore's client sends a short string with a lone surrogate as invalid UTF-8 (refused, as UNKNOWN,
  // on every retry) and silently replaces it in a longer one; two such business keys would also share an id.
  const unpaired = (['processKey', 'businessKey'] as const).find((field) => hasLoneSurrogate(parsed.value[field]));
  // zod's record parser drops a "__proto__" key; check the raw body so it is refused, not lost.
  const problem =
    unpaired === undefined
      ? variablesProblem((req.body as { variables?: unknown }).variables ?? {})
      : `${unpaired} is not valid Unicode (lone surrogate)`;
  if (problem !== null) return { kind: 'reject', status: 400, error: problem };
  try {
    const engine = await deps.engine();
    const model = engine.find(processKey);
    if (model === null)
      return {
        kind: 'reject',
        status: 400,
        error: `unknown processKey ${JSON.stringify(processKey)}; deployed: ${engine.processKeys.join(', ')}`,
      };
    if (model.startEventId === null) return messageOnly(model);
    // A start the model can never correlate would end in INCIDENT / MISSING_CORRELATION_KEY, which no command repairs;
    // a timer variable it cannot read would stop the token with INVALID_TIMER, maybe days later.
    const uncorrelatable = correlationProblem(model, variables) ?? timerProblem(model, variables);
    if (uncorrelatable !== null) return { kind: 'reject', status: 400, error: uncorrelatable };
    // One id per request: if the commit lands but its answer is lost, the re-run knows the instance as its own.
    const started = await startProcessInstance(deps.db(), engine, {
      processKey,
      businessKey,
      variables,
      now: deps.now(),
      requestId: randomUUID(),
    });
    logDuplicates(deps.log, started.duplicates);
    await dispatchSettled({ jobs: deps.queue(), timers: deps.timerQueue() }, started, deps.log);
    const { instance } = started;
    deps.log.info(started.created ? 'process started' : 'process already started', {
      processInstanceId: instance.id,
      processKey,
      businessKey,
    });
    const body = { processInstanceId: instance.id, created: started.created, status: instance.status };
    return started.created ? { kind: 'created', body } : { kind: 'ok', body };
  } catch (err) {
    const failure = classifyFailure(err);
    const retry = failure.kind === 'retryable';
    deps.log.error('could not start the process', {
      processKey,
      businessKey,
      code: failure.code,
      retry,
      error: errorMessage(err),
    });
    // Unexpected (a defect, a misconfiguration, input the checks above missed): the same request fails the same way.
    return failureAnswer(failure, 'start the process', RETRY_AFTER_SECONDS);
  }
}
