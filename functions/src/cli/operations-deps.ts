import { createLogger } from '../log';
import type { OperationsDeps } from '../operations/types';
import type { CliContext } from './context';

/**
 * What the operations module needs, from the CLI's context: its clients
 * (created on first use, closed with the context), its clock, and a log
 * on the operator's terminal (stderr: stdout is the command's output).
 */
export function operationsDeps(ctx: CliContext): OperationsDeps {
  const { runJobUrl, fireTimerUrl } = ctx.config.tasks;
  return {
    db: ctx.db,
    engine: ctx.runtime.engine,
    jobQueue: runJobUrl === null ? null : () => ctx.runtime.queue(runJobUrl),
    timerQueue: fireTimerUrl === null ? null : () => ctx.runtime.timerQueue(fireTimerUrl),
    payloadStore: ctx.runtime.payloadStore,
    config: ctx.config,
    log: createLogger((line) => ctx.io.err(line), { function: 'inbox-cli' }),
    now: ctx.now,
  };
}
