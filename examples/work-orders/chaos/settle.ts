/** The end of a chaos run: settling, and the operator's requeue of dead letters. */
import type { Firestore } from '@google-cloud/firestore';
import { runCli } from '../../../functions/src/cli/main';
import { cancelledOrders, openWork } from './observe';
import type { ChaosPlan } from './plan';
import type { Races } from './races';
import { sleep, type ChaosOptions } from './run-types';

/**
 * Waits until nothing is OPEN or PENDING (twice in a row), then does what an
 * operator would: one `inbox requeue --reason DEAD_LETTERED --yes`. Repeats
 * while that finds something to requeue (a dead letter may land late).
 * `cliHost`: the CLI's line to Firestore, the outage gate (gateOf).
 */
export async function settleAndRepair(
  cliHost: string,
  db: Firestore,
  projectId: string,
  options: ChaosOptions,
  plan: ChaosPlan,
  races: Races,
): Promise<void> {
  const deadline = Date.now() + options.settleTimeoutMs;
  const raceTranches = plan.races.flatMap((r) => {
    const m = plan.messages[r.message];
    return m?.kind === 'completion' ? [m.docId] : [];
  });
  // Completions nobody will wait for: racing tranches (their timer may win), and those of orders an operator cancelled (read back from the records).
  const waitForNobody = async (): Promise<Set<string>> => {
    const cancelled = await cancelledOrders(db);
    const ofCancelled = plan.messages.flatMap((m) =>
      m.kind === 'completion' && cancelled.has(m.workOrderId) ? [m.docId] : [],
    );
    return new Set([...raceTranches, ...ofCancelled]);
  };
  const settle = async (): Promise<void> => {
    let quiet = 0;
    while (quiet < 2) {
      if (Date.now() > deadline) throw new Error(`not settled after ${options.settleTimeoutMs} ms`);
      await sleep(2_000);
      // A read that fails (Firestore restarting) is retried; say so, or a read that always fails would look like a run that never settles.
      const work = await waitForNobody()
        .then((nobody) => openWork(db, nobody))
        .catch((err: unknown) => {
          options.progress(
            `settling: could not read the open work (${err instanceof Error ? err.message : String(err)})`,
          );
          return null;
        });
      quiet =
        work !== null && work.open === 0 && work.pendingJobs === 0 && work.pendingTimers === 0 && races.inFlight() === 0
          ? quiet + 1
          : 0;
      if (work !== null)
        options.progress(
          `settling: ${work.open} OPEN, ${work.pendingJobs} jobs PENDING, ${work.pendingTimers} timers PENDING, ${races.inFlight()} races publishing, ${work.documents} documents`,
        );
    }
  };
  for (let round = 1; round <= 3; round++) {
    await settle();
    let out = '';
    const argv = ['--json', 'requeue', '--reason', 'DEAD_LETTERED', '--yes'];
    await runCli(
      argv,
      { out: (t) => (out += t), err: () => undefined, confirm: async () => true },
      { ...process.env, GOOGLE_CLOUD_PROJECT: projectId, FIRESTORE_EMULATOR_HOST: cliHost },
    );
    const requeued = (JSON.parse(out === '' ? '{}' : out) as { requeued?: number }).requeued ?? 0;
    options.progress(`npm run inbox -- requeue --reason DEAD_LETTERED --yes: ${requeued} requeued`);
    if (requeued === 0) return;
  }
  await settle();
}
