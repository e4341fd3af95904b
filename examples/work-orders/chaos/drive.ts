/**
 * The chaos run's middle: the plan's steps in order (16 at a time), holding
 * back while the receiver is behind, each fault and each operator repair
 * fired at its step, and the races started as their orders get there.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { PubSub } from '@google-cloud/pubsub';
import { instanceId } from '../../../functions/src/engine/ids';
import { INBOX } from '../../../functions/src/inbox/document';
import { invalidDocId } from '../../../functions/src/inbox/ids';
import type { LocalStack } from '../../../tools/local/stack';
import { completionSubscription, TOPICS } from '../local/names';
import { startApprover, type Approver } from './approver';
import { operate, type OperatorTally } from './operator';
import type { ChaosPlan } from './plan';
import { COMPLETION_ATTRIBUTES } from './plan-messages';
import type { PlannedFault } from './plan-schedule';
import { startRaces, type Races } from './races';
import { sleep, type ChaosOptions } from './run-types';
import { operatorCli, orderStart, startOrder, strike } from './stack-actions';

export async function drive(
  plan: ChaosPlan,
  stack: LocalStack,
  { db, projectId, cliHost }: { db: Firestore; projectId: string; cliHost: string },
  pubsub: PubSub,
  options: ChaosOptions,
  tally: OperatorTally,
): Promise<{ poisonIds: string[]; faults: Array<PlannedFault & { note: string }>; races: Races; approver: Approver }> {
  const info = await stack.info();
  const topic = pubsub.topic(TOPICS.completions);
  const poisonIds: string[] = [];
  const poisonSlot = new Map<number, number>();
  for (const [i, m] of plan.messages.entries()) if (m.kind === 'poison') poisonSlot.set(i, poisonSlot.size);
  // Documents the publishes so far will make (a duplicate makes none), against documents stored.
  let willExist = 0;
  let stored = 0;
  let counting = true;
  const counter = (async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set false after the run; TypeScript reads an IIFE as inline code, so it sees only `true`
    while (counting) {
      stored = await db
        .collection(INBOX)
        .count()
        .get()
        .then(
          (s) => s.data().count,
          () => stored,
        );
      await sleep(500);
    }
  })();

  const fired: Array<PlannedFault & { note: string }> = [];
  let faultChain: Promise<void> = Promise.resolve();
  let nextFault = 0;
  const fire = (fault: PlannedFault): void => {
    faultChain = faultChain.then(async () => {
      options.progress(
        `fault at step ${fault.atStep}: ${fault.kind}${fault.kind === 'relay-kill' ? ` of relay ${fault.target}` : ''}`,
      );
      fired.push({ ...fault, note: await strike(stack, fault, options.downMs) });
    });
  };

  // The operator works beside the faults, one repair after the other, as one person would; racing orders are left alone.
  const operator = {
    db,
    cli: operatorCli(projectId, cliHost),
    leaveAlone: new Set(plan.races.map((r) => instanceId('work-order-execution', r.workOrderId))),
    tally,
    progress: options.progress,
  };
  let repairChain: Promise<void> = Promise.resolve();
  let nextRepair = 0;
  const repair = (): void => {
    const planned = plan.repairs[nextRepair++];
    if (planned !== undefined) repairChain = repairChain.then(() => operate(operator, planned));
  };

  // The approver completes the second model's user tasks from the first start until the run has settled.
  const approver = startApprover({
    inspections: plan.inspections,
    cli: operatorCli(projectId, cliHost, 'chaos approver'),
    secondPerson: operatorCli(projectId, cliHost, 'second planner'),
    progress: options.progress,
  });
  const races = startRaces(plan, db, topic, options, () => (willExist += 1));
  const raceDeadlines = new Map(plan.races.map((r) => [r.workOrderId, r.deadline]));
  const inspections = new Map(plan.inspections.map((i) => [i.workOrderId, i]));
  let next = 0;
  let deployed: Promise<void> = Promise.resolve();
  const worker = async (): Promise<void> => {
    while (next < plan.steps.length) {
      const index = next++;
      while (nextFault < plan.faults.length && (plan.faults[nextFault]?.atStep ?? Infinity) <= index) {
        const fault = plan.faults[nextFault++] as PlannedFault;
        fire(fault);
        // A deploy is a moment of the run: every step from it on waits for it (what is in flight meanwhile meets the restart).
        if (fault.kind === 'deploy') deployed = faultChain;
      }
      await deployed;
      while (nextRepair < plan.repairs.length && (plan.repairs[nextRepair]?.atStep ?? Infinity) <= index) repair();
      const step = plan.steps[index];
      if (step === undefined) break;
      if (step.kind === 'start') {
        const start = orderStart(
          step.workOrderId,
          raceDeadlines.get(step.workOrderId) ?? null,
          inspections.get(step.workOrderId),
        );
        await startOrder(info.functions.startProcess, step.workOrderId, start);
        continue;
      }
      while (willExist - stored > options.maxBacklog) await sleep(100);
      const message = plan.messages[step.message];
      if (message === undefined) throw new Error(`step ${index}: no message ${step.message}`);
      const attributes = message.kind === 'poison' ? message.attributes : COMPLETION_ATTRIBUTES;
      if (message.kind !== 'duplicate') willExist += 1;
      const messageId = await topic.publishMessage({ data: message.data, attributes: { ...attributes } });
      if (message.kind === 'completion') races.published(message.workOrderId);
      const slot = poisonSlot.get(step.message);
      if (slot !== undefined) poisonIds[slot] = invalidDocId(completionSubscription(info.projectId), messageId);
      if (index % 500 === 0) options.progress(`step ${index}/${plan.steps.length}: ${stored} documents stored`);
    }
  };
  try {
    await Promise.all(Array.from({ length: 16 }, worker));
    while (nextFault < plan.faults.length) fire(plan.faults[nextFault++] as PlannedFault);
    while (nextRepair < plan.repairs.length) repair();
    await faultChain;
    await repairChain;
  } catch (err) {
    // The run ends here: the approver stops looking (on success it goes on until the run has settled).
    await approver.stop();
    throw err;
  } finally {
    counting = false;
    await counter;
  }
  return { poisonIds, faults: fired, races, approver };
}
