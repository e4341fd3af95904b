/** How times and process tokens read in `inbox explain` and the console's explanation. Pure. */
import type { TokenFact } from './explain-model';

/** An ISO time with how far it is from now. */
export function when(at: Date, now: Date): string {
  const ms = at.getTime() - now.getTime();
  const abs = Math.abs(ms);
  const span =
    abs < 60_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 7_200_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 172_800_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return `${at.toISOString()} (${ms >= 0 ? `in ${span}` : `${span} ago`})`;
}

/** Where a token is and what it waits for. */
export function tokenText(t: TokenFact): string {
  if (t.status === 'WAITING_MESSAGE' && t.waitingFor !== null)
    return `token ${t.executionId} waits at ${t.activityId} for ${t.waitingFor.messageName} with key ${t.waitingFor.correlationKey}`;
  if (t.status === 'WAITING_JOB')
    return `token ${t.executionId} is at activity ${t.activityId}, waiting for job ${String(t.jobId)}`;
  if (t.status === 'WAITING_USER')
    return `token ${t.executionId} waits at user task ${t.activityId} for a person (inbox tasks show ${String(t.waitsOn)})`;
  if (t.status === 'WAITING_JOIN')
    return `token ${t.executionId} waits at join ${t.activityId} (arrived by ${String(t.waitsOn)}) for a token on each other incoming flow`;
  if (t.status === 'WAITING_ITEMS')
    return `token ${t.executionId} waits at multi-instance activity ${t.activityId} until its items have ended, each an instance of its own (inbox instances with the business key lists them)`;
  if (t.status === 'WAITING_CALL')
    return `token ${t.executionId} waits at call activity ${t.activityId} until the instance it called has no token left (inbox instance ${String(t.waitsOn)})`;
  if (t.status === 'WAITING_SCOPE')
    return `token ${t.executionId} waits at subprocess ${t.activityId} until no token is left inside it`;
  if (t.status === 'ACTIVE') return `token ${t.executionId} is stopped at activity ${t.activityId}`;
  return `token ${t.executionId} is ${t.status} at activity ${t.activityId}`;
}
