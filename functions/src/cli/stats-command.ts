import { readOverview } from '../operations/overview';
import type { CliContext } from './context';
import { operationsDeps } from './operations-deps';
import { print } from './output';
import { formatAge } from './parse';

/** `inbox stats`: documents by status and park reason, the oldest OPEN one, and the levels the alert policies watch (operations/overview.ts). */
export async function statsCommand(ctx: CliContext): Promise<void> {
  const o = await readOverview(operationsDeps(ctx));
  const days = o.waitingAlertDays;
  // The JSON keeps the shape it had before the overview moved to operations/ (the gauge's fields, its threshold).
  const waiting = o.waiting.map((w) => ({
    messageName: w.messageName,
    oldestWaitingAgeSeconds: w.oldestWaitingAgeSeconds,
    waitingOverThreshold: w.waitingOverThreshold,
    thresholdDays: days,
  }));
  const { counts, parkedByReason: reasons } = o;
  print(
    ctx,
    {
      counts,
      parkedByReason: reasons,
      oldestOpenAgeSeconds: o.oldestOpenAgeSeconds,
      openIncidents: o.openIncidents,
      failedJobs: o.failedJobs,
      waiting,
    },
    ['status / reason', 'documents'],
    [
      ...Object.entries(counts),
      ...Object.entries(reasons)
        .filter(([, n]) => n > 0)
        .map(([r, n]) => [`  PARKED ${r}`, n]),
      ['oldest OPEN (age)', o.oldestOpenAgeSeconds === null ? 'none' : `${o.oldestOpenAgeSeconds} s`],
      // The levels the alert policies watch besides PARKED (details: `inbox incidents`).
      ['instances in INCIDENT', o.openIncidents],
      ['FAILED jobs', o.failedJobs],
      // The waiting-too-long level, per message name (details: `inbox waiting --message NAME --older-than ${days}d`).
      ...waiting.flatMap((w) => [
        [`tokens waiting for ${w.messageName} ${days} d or longer`, w.waitingOverThreshold],
        [
          `oldest waiting for ${w.messageName} (age)`,
          w.oldestWaitingAgeSeconds === null ? 'none' : formatAge(w.oldestWaitingAgeSeconds * 1000),
        ],
      ]),
    ],
  );
}
