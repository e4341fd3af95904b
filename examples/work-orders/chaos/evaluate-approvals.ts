/**
 * Pure evaluation of "Ask the approvers" on one work order of the second
 * model: a parallel multi-instance user task over the start's `approvers`,
 * each item answered `approves` by the run's approver in a random order,
 * ended by its completion condition (`approves == true ||
 * numberOfCompletedInstances >= 3`) or after its last item.
 *
 * What must hold, from the store alone: the activity ended once (one batch
 * of items ran to its end, any other was terminated by a repair that moved
 * the activity's token and is on record; its counting documents are gone;
 * "Tally the approvals" ran once), and it ended when the condition first
 * held: of the items that completed, at most one said yes and at most three
 * answered, and unless one said yes or three answered, every item answered.
 * The items still open then were terminated (their tasks CANCELLED, none
 * completed afterwards). The output collection holds exactly the answers of
 * the items that completed, in item order, null for the others, and the
 * tally decided on them. With the approver's log: each answer it saw taken
 * completed its item with what was planned, each it saw refused was for an
 * item the condition had terminated (a late answer) or a repair had moved;
 * and no answer sent after the approver had seen the condition hold (a yes
 * taken, or the third answer taken, of the same batch) was taken: the end
 * and the termination of the open items are in the transaction of the
 * answer that meets the condition, so whatever comes after is refused.
 */
import { STALE_JOB_ERROR } from '../../../functions/src/engine/state';
import { APPROVALS, decide, TERMINATED_BY_CONDITION } from './app/inspection';
import type { ApproverAnswer } from './approver';
import { answerRequestId, type PlannedInspection } from './plan-inspection';
import type { ChaosSnapshot } from './snapshot';

type Instance = ChaosSnapshot['instances'][number];
const MOVED_BY_A_REPAIR = /^a repair moved its token to /;
const LIVE = (status: string): boolean => status !== 'ENDED' && status !== 'CANCELLED';

export interface ApprovalVerdict {
  readonly violations: string[];
  /** The activity ended once, when its condition first held or after its last item, and the step after it ran once. */
  readonly endedOnce: boolean;
  /** How it ended: its condition held (a yes, or the third answer), or every item answered without it. */
  readonly by: 'condition' | 'all answered' | null;
  /** The output collection holds exactly the answers of the items that completed. */
  readonly outputExact: boolean;
  /** "Tally the approvals" ran once (one job that was not left stale by a repair). */
  readonly talliedOnce: boolean;
  /** Items still running, or no batch that ran to its end. */
  readonly stuck: boolean;
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The items' batches of `caller`'s "Ask the approvers": each entry of the activity is a batch of its own. */
function batchesOf(caller: Instance, snapshot: ChaosSnapshot): Map<string, Instance[]> {
  const batches = new Map<string, Instance[]>();
  for (const i of snapshot.instances) {
    if (i.calledBy?.instanceId !== caller.id || i.calledBy.activityId !== APPROVALS.activityId) continue;
    const batch = i.calledBy.batch ?? '?';
    batches.set(batch, [...(batches.get(batch) ?? []), i]);
  }
  return batches;
}

/** One item's violations: it ended (answered, or terminated by the condition), its tasks as that says. */
function judgeItem(
  item: Instance,
  order: PlannedInspection,
  snapshot: ChaosSnapshot,
  say: (what: string) => void,
): { answered: boolean; approves: unknown } {
  const index = item.calledBy?.index ?? -1;
  const planned = order.approvers[index];
  const name = item.variables[APPROVALS.elementVariable];
  const label = `item ${index + 1} (${String(name)})`;
  if (planned === undefined || name !== planned.name)
    say(`${label}: expected approver ${planned?.name ?? 'none'} at item ${index + 1}`);
  const live = item.tokens.filter((t) => LIVE(t.status));
  if (item.status !== 'COMPLETED' || live.length > 0)
    say(`${label} is ${item.status}, tokens left at ${live.map((t) => t.activityId).join(', ') || 'none'}`);
  const moved = item.repairs.some((r) => r.kind === 'move-token');
  const tasks = snapshot.userTasks.filter((t) => t.processInstanceId === item.id);
  const completed = tasks.filter((t) => t.status === 'COMPLETED');
  for (const t of tasks.filter((x) => x.status === 'OPEN')) say(`${label}: task ${t.id.slice(0, 12)} still OPEN`);
  for (const t of tasks.filter((x) => x.status === 'CANCELLED'))
    if (!(t.cancelReason === TERMINATED_BY_CONDITION && item.terminated !== null) && !moved)
      say(`${label}: task ${t.id.slice(0, 12)} CANCELLED (${t.cancelReason ?? '?'}), but no repair moved its token`);
  if (item.terminated === null) {
    // Answered: its one task completed by the approver's answer, with what the approver planned.
    const approves = item.variables[APPROVALS.answerVariable];
    if (completed.length !== 1) say(`${label} ended without termination, but ${completed.length} tasks COMPLETED`);
    for (const t of completed)
      if (t.completionRequestId !== answerRequestId(t.id))
        say(`${label}: task ${t.id.slice(0, 12)} completed by request ${t.completionRequestId ?? '?'}`);
    if (planned !== undefined && approves !== planned.approves)
      say(`${label} answered ${String(approves)}, but ${planned.name} answers ${String(planned.approves)}`);
    return { answered: true, approves };
  }
  if (item.terminated !== TERMINATED_BY_CONDITION && !MOVED_BY_A_REPAIR.test(item.terminated))
    say(`${label} terminated: ${item.terminated}`);
  // Terminated while open: never completed, before or after.
  if (completed.length > 0) say(`${label} was terminated, and ${completed.length} of its tasks COMPLETED`);
  return { answered: false, approves: null };
}

/** When the approver had seen the condition hold for a batch: its first yes taken, or its third answer taken (Infinity: never). */
function conditionSeenAt(answers: readonly ApproverAnswer[]): number {
  const taken = answers.filter((a) => a.outcome === 'COMPLETED').sort((a, b) => a.doneAt - b.doneAt);
  const yes = taken.find((a) => a.approves)?.doneAt ?? Infinity;
  const third = taken[APPROVALS.enoughAnswers - 1]?.doneAt ?? Infinity;
  return Math.min(yes, third);
}

export function judgeApprovals(
  order: PlannedInspection,
  caller: Instance,
  snapshot: ChaosSnapshot,
  answers: readonly ApproverAnswer[] | null,
): ApprovalVerdict {
  const violations: string[] = [];
  const say = (what: string): void => void violations.push(`approvals ${order.workOrderId}: ${what}`);
  const batches = batchesOf(caller, snapshot);
  // A batch a repair ended (it moved the activity's token, which starts a new batch): every item that was still open went with the move.
  const movedAway = [...batches.entries()].filter(([, items]) =>
    items.some((i) => i.terminated !== null && MOVED_BY_A_REPAIR.test(i.terminated)),
  );
  const ran = [...batches.entries()].filter(([batch]) => !movedAway.some(([b]) => b === batch));
  const moves = caller.repairs.filter((r) => r.kind === 'move-token').length;
  if (movedAway.length > moves)
    say(`${movedAway.length} batches of items ended by a repair, but ${moves} move-token repairs on record`);
  for (const [batch, items] of movedAway)
    for (const item of items)
      if (item.status !== 'COMPLETED')
        say(
          `item ${(item.calledBy?.index ?? -1) + 1} of batch ${batch.slice(0, 12)}, ended by a repair, is ${item.status}`,
        );
  const leftovers = snapshot.itemBatches.filter((d) => batches.has(d.batch));
  for (const d of leftovers) say(`counting document ${d.id.slice(0, 16)} left behind after the activity ended`);
  const tallies = caller.jobs.filter((j) => j.activityId === APPROVALS.tallyTaskId && j.lastError !== STALE_JOB_ERROR);
  const talliedOnce = tallies.length === 1 && tallies[0]?.status === 'DONE';
  if (!talliedOnce)
    say(
      `"Tally the approvals" ran ${tallies.length} times (${tallies.map((j) => j.status).join(', ') || 'none'}), expected once`,
    );

  const [final] = ran;
  if (final === undefined || ran.length > 1) {
    say(ran.length === 0 ? 'no batch of items ran to its end' : `${ran.length} batches of items ran to their end`);
    return { violations, endedOnce: false, by: null, outputExact: false, talliedOnce, stuck: ran.length === 0 };
  }
  const [, items] = final;
  const n = order.approvers.length;
  const indexes = items.map((i) => i.calledBy?.index ?? -1).sort((a, b) => a - b);
  if (
    !sameJson(
      indexes,
      Array.from({ length: n }, (_, i) => i),
    )
  )
    say(`items ${indexes.map((i) => i + 1).join(', ')}, expected 1 to ${n} (one per approver)`);
  const stuck = items.some((i) => i.status !== 'COMPLETED');
  const expected: unknown[] = new Array<unknown>(n).fill(null);
  let answered = 0;
  let yes = 0;
  for (const item of items) {
    const verdict = judgeItem(item, order, snapshot, say);
    if (!verdict.answered) continue;
    answered += 1;
    if (verdict.approves === true) yes += 1;
    const index = item.calledBy?.index ?? -1;
    if (index >= 0 && index < n) expected[index] = verdict.approves;
  }
  // The condition held after the last answer taken, and after no earlier one: one yes at most, three answers at most.
  const holds = yes > 0 || answered >= APPROVALS.enoughAnswers;
  const by = holds ? 'condition' : answered === n ? 'all answered' : null;
  const endedRight = !stuck && yes <= 1 && answered <= APPROVALS.enoughAnswers && by !== null;
  if (!stuck && !endedRight)
    say(
      `ended with ${answered} of ${n} answers taken, ${yes} of them yes: not when the condition first held (one yes, or ${APPROVALS.enoughAnswers} answers) nor after the last item`,
    );
  const output = caller.variables[APPROVALS.outputVariable];
  const outputExact = sameJson(output, expected);
  if (!outputExact) say(`output collection ${JSON.stringify(output)}, expected ${JSON.stringify(expected)}`);
  const decision = decide(expected);
  if (talliedOnce && caller.variables[APPROVALS.decisionVariable] !== decision.approvalDecision)
    say(`tallied ${String(caller.variables[APPROVALS.decisionVariable])}, expected ${decision.approvalDecision}`);

  // What the approver saw must be what the store says.
  const mine = (answers ?? []).filter((x) => x.workOrderId === order.workOrderId);
  for (const [batch, batchItems] of batches) {
    const ids = new Set(batchItems.map((i) => i.id));
    const seen = mine.filter((a) => ids.has(a.itemInstanceId));
    const ended = conditionSeenAt(seen);
    for (const a of seen.filter((x) => x.outcome === 'COMPLETED' && x.sentAt > ended))
      say(
        `${a.approver}'s answer ${String(a.approves)} was taken, but sent ${a.sentAt - ended} ms after the approver saw the condition of batch ${batch.slice(0, 12)} hold`,
      );
  }
  for (const a of mine) {
    const item = snapshot.instances.find((i) => i.id === a.itemInstanceId);
    const task = snapshot.userTasks.find((t) => t.id === a.taskId);
    const what = `${a.approver}'s answer ${String(a.approves)} (${a.outcome})`;
    if (item === undefined || task === undefined) say(`${what}: its item or task is gone`);
    else if (a.outcome === 'COMPLETED' && (item.terminated !== null || task.status !== 'COMPLETED'))
      say(
        `${what}: but its item is ${item.terminated === null ? item.status : 'terminated'} and its task ${task.status}`,
      );
    else if (a.outcome === 'TERMINATED' && (item.terminated !== TERMINATED_BY_CONDITION || task.status !== 'CANCELLED'))
      say(`${what}: but its item is ${item.terminated ?? 'not terminated'} and its task ${task.status}`);
    else if (a.outcome === 'MOVED' && (task.status !== 'CANCELLED' || !MOVED_BY_A_REPAIR.test(task.cancelReason ?? '')))
      say(`${what}: but its task is ${task.status} (${task.cancelReason ?? 'no reason'})`);
  }
  return {
    violations,
    endedOnce: endedRight && talliedOnce && leftovers.length === 0 && violations.length === 0,
    by: endedRight ? by : null,
    outputExact,
    talliedOnce,
    stuck,
  };
}
