import { type Doc, view } from '../operations/documents';
import { RefusedError } from '../operations/refused';
import { readStoredInstance } from '../operations/stored-instance';
import { QUERIES } from '../queries';
import type { CliContext } from './context';
import { print } from './output';

/** A called instance's caller as `INSTANCE at ACTIVITY`; empty for a top-level instance. */
function calledByText(value: unknown): string {
  const c = value as { instanceId?: unknown; activityId?: unknown } | undefined;
  return typeof c?.instanceId === 'string' ? `${c.instanceId} at ${String(c.activityId)}` : '';
}

/** `inbox instances KEY`: the process instances of a business key, a row per token (where it is, what it waits for);
 * a called instance has its caller's business key, so a caller and the instances it called list together. */
export async function instancesCommand(ctx: CliContext, businessKey: string): Promise<void> {
  const db = ctx.db();
  const found = (await QUERIES.instancesByBusinessKey.build(db, businessKey).get()).docs.map(view);
  if (found.length === 0) throw new RefusedError(`no process instance with business key ${businessKey}`);
  // Tokens from the instance document (or, stored before tokens moved in, from its token documents: stored-instance.ts).
  const withTokens = await Promise.all(
    found.map(async (i): Promise<Doc & { executions: Doc[] }> => {
      const stored = await readStoredInstance(db, i.id);
      // The tokens once, as `executions` (the shape of this output before they moved into the instance document), and the jobs as a list.
      const rest = Object.fromEntries(Object.entries(i).filter(([k]) => k !== 'tokens' && k !== 'jobs'));
      return {
        ...rest,
        id: i.id,
        executions: (stored?.tokens ?? []).map((e) => ({ ...e })),
        jobs: (stored?.jobs ?? []).map((j) => ({ ...j })),
      };
    }),
  );
  print(
    ctx,
    withTokens,
    ['instance', 'process', 'status', 'called by', 'token', 'at', 'token status', 'waiting for', 'incidents'],
    withTokens.flatMap((i) =>
      i.executions.map((e) => [
        i.id,
        i.processKey,
        i.status,
        calledByText(i.calledBy),
        e.id,
        e.activityId,
        e.status,
        e.status === 'WAITING_CALL' ? `called instance ${String(e.calledInstanceId)}` : e.waitingFor,
        (i.incidents as unknown[] | undefined)?.length ?? 0,
      ]),
    ),
  );
}
