import { PermanentFailureError } from '../core/errors';
import type { InstanceState, JobState } from '../engine/state';

/**
 * Async step handlers, registered by BPMN task id or zeebe task type (the app's `steps`,
 * functions/src/app.ts). They run in runJob, outside any transaction, and
 * may run more than once (Cloud Tasks is at-least-once, and a crash after
 * the side effect re-runs the job): each must be idempotent. They return
 * variables to merge into the instance.
 */
export interface JobContext {
  readonly job: JobState;
  /** The instance; its variables with the task's `zeebe:ioMapping` inputs laid over them. */
  readonly instance: InstanceState;
  /** The task's `zeebe:taskHeaders`, as written (runJob always gives them; optional so a test may leave them out). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly now: Date;
}
export type AsyncHandler = (ctx: JobContext) => Promise<Readonly<Record<string, unknown>>>;

/**
 * What a handler throws for a failure no retry can heal (the system it
 * calls refuses the request for good, the data can never be valid): the job is
 * FAILED at once, without spending INBOX_JOB_MAX_ATTEMPTS, and its instance
 * shows INCIDENT / JOB_FAILED with this message, for an operator to repair
 * (move or cancel the token). Anything else a handler throws is retried.
 * Also recognised as the `cause` of the error thrown.
 *
 * @example throw new PermanentJobError(`${id} is unknown to the receiving system`);
 */
export class PermanentJobError extends PermanentFailureError {
  override readonly name: string = 'PermanentJobError';
}
