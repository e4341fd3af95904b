/** The end of a chaos run: settling, and the operator's requeue of dead letters. */
import type { Firestore } from '@google-cloud/firestore';
import { STALE_JOB_ERROR } from '../../../functions/src/engine/state';
import { INSPECTION } from './app/inspection';
import type { Approver } from './approver';
import { cancelledOrders, openWork, type PendingWork, undelivered } from './observe';
import type { OperatorCli } from './operator';
import type { ChaosPlan } from './plan';
import type { Races } from './races';
import { sleep, type ChaosOptions } from './run-types';

/**
 * A second-model order whose inspection went round its error boundary loop
 * more often than it has findings: its rounds no longer lower the findings
 * (or one ran twice), so it will go round for ever, a job always PENDING.
 * The run does not wait for it; the evaluation reports it stuck.
 */
export function runawayLoop(plan: ChaosPlan): (instance: PendingWork) => boolean {
  const findings = new Map(plan.inspections.map((i) => [i.workOrderId, i.findings]));
  const caught = `BPMN error ${INSPECTION.errorCode}:`;
  return (instance) => {
    const k = findings.get(instance.businessKey);
    if (k === undefined) return false;
    const rounds = instance.jobs.filter(
      (j) =>
        j.activityId === INSPECTION.inspectTaskId &&
        j.lastError !== STALE_JOB_ERROR &&
        j.lastError?.startsWith(caught) === true,
    ).length;
    return rounds > k;
  };
}

/**
 * Waits until every tranche is stored, nothing is OPEN or PENDING (twice in a row; a runaway loop's
 * jobs aside, runawayLoop), no user task is OPEN and neither a race nor
 * the approver is under way, then does what an operator would: one `inbox
 * requeue --reason DEAD_LETTERED --yes` (`cli`, the operator's). Repeats
 * while that finds something to requeue (a dead letter may land late).
 */
export async function settleAndRepair(
  db: Firestore,
  cli: OperatorCli,
  options: ChaosOptions,
  plan: ChaosPlan,
  { races, approver }: { readonly races: Races; readonly approver: Approver },
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
  const runaway = runawayLoop(plan);
  // Every tranche is stored once Pub/Sub has pushed it; one still held by Pub/Sub (backing off after a refused push,
  // a restart of the receiver) is work under way, not settled: without this the run would call it lost.
  const tranches = [...new Set(plan.messages.flatMap((m) => (m.kind === 'completion' ? [m.docId] : [])))];
  const settle = async (): Promise<void> => {
    let quiet = 0;
    while (quiet < 2) {
      if (Date.now() > deadline) throw new Error(`not settled after ${options.settleTimeoutMs} ms`);
      await sleep(2_000);
      // A read that fails (Firestore restarting) is retried; say so, or a read that always fails would look like a run that never settles.
      const work = await waitForNobody()
        .then(async (nobody) => ({
          ...(await openWork(db, nobody, runaway)),
          inPubSub: await undelivered(db, tranches),
        }))
        .catch((err: unknown) => {
          options.progress(
            `settling: could not read the open work (${err instanceof Error ? err.message : String(err)})`,
          );
          return null;
        });
      const idle =
        work !== null &&
        work.open === 0 &&
        work.inPubSub === 0 &&
        work.pendingJobs === 0 &&
        work.pendingTimers === 0 &&
        work.openTasks === 0 &&
        races.inFlight() === 0 &&
        approver.inFlight() === 0;
      quiet = idle ? quiet + 1 : 0;
      if (work !== null)
        options.progress(
          `settling: ${work.open} OPEN, ${work.inPubSub} tranches not yet pushed, ${work.pendingJobs} jobs PENDING${work.runaways > 0 ? ` (and ${work.runaways} runaway loops, not waited for)` : ''}, ${work.pendingTimers} timers PENDING, ${work.openTasks} user tasks OPEN (${approver.inFlight()} with the approver), ${races.inFlight()} races publishing, ${work.documents} documents`,
        );
    }
  };
  for (let round = 1; round <= 3; round++) {
    await settle();
    const { out } = await cli(['--json', 'requeue', '--reason', 'DEAD_LETTERED', '--yes']);
    const requeued = (JSON.parse(out === '' ? '{}' : out) as { requeued?: number }).requeued ?? 0;
    options.progress(`npm run inbox -- requeue --reason DEAD_LETTERED --yes: ${requeued} requeued`);
    if (requeued === 0) return;
  }
  await settle();
}
