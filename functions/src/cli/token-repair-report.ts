import type { Repaired } from '../engine/store/token-repair';
import type { RepairOutcome } from '../operations/types';
import type { CliContext } from './context';
import { reportUndispatched } from './dispatch-after-repair';
import { ALREADY_APPLIED, print } from './output';

/** What a token repair (move-token, cancel-token) prints once operations dispatched what it created, with what the sweep will take care of. */
export function reportTokenRepair(ctx: CliContext, what: string, changed: Repaired, outcome: RepairOutcome): void {
  const done = { dispatched: outcome.dispatched, timersDispatched: outcome.timersDispatched };
  print(
    ctx,
    { ...changed, ...done },
    ['repair', 'new jobs', 'dispatched', 'new timers', 'timers dispatched', 'consumed messages'],
    [
      [
        what,
        changed.jobs.length,
        done.dispatched,
        changed.timers.length,
        done.timersDispatched,
        changed.consumed.length,
      ],
    ],
  );
  reportUndispatched(ctx, changed, done);
  if (changed.alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}
