/**
 * The chaos run's approver: a planner who completes the second model's user
 * tasks ("Approve work order") while messages arrive, relays die, jobs
 * retry and Firestore restarts, through the real completion path: `inbox
 * tasks list --status OPEN`, then `inbox tasks complete ID --request-id R`
 * (the CLI in process). A call that fails is sent again with the same
 * request id, so a completion whose commit landed before the failure
 * answers "already completed"; a planned repeat must answer that too, and a
 * second person with a request id of their own must be refused. A task
 * whose token a repair moved is cancelled under the approver's feet: the
 * new task is completed instead.
 *
 * It also answers for the approvers of "Ask the approvers" (a parallel
 * multi-instance user task): for an item's task it looks the item up with
 * `inbox instances BUSINESS_KEY` (whose approval it is: the item's
 * `approver`), waits the time planned for that approver and answers what
 * they planned (`approves`), so the items are answered in a random order.
 * Once the first yes (or the third answer) ends the activity, the items
 * still open are terminated: an answer to one of those must be refused as
 * cancelled by the completion condition, and is counted (late answers).
 * Every answer is logged with how it ended, for the evaluation.
 */
import { APPROVALS, INSPECTION, TERMINATED_BY_CONDITION } from './app/inspection';
import type { OperatorCli } from './operator';
import { answerRequestId, approvalRequestId, type PlannedInspection } from './plan-inspection';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What the approver's completions came to. */
export interface ApproverTally {
  /** Tasks completed by the approver's request (COMPLETED, or ALREADY_COMPLETED on a retry after a failed call). */
  completed: number;
  /** Of those: a retry after a failed call answered ALREADY_COMPLETED (the failed call had committed). */
  landedDespiteFailure: number;
  /** Planned repeats of a completion (same request id) answered ALREADY_COMPLETED, as they must. */
  repeatsAnswered: number;
  /** Second persons (another request id) refused as "already completed", as they must be. */
  secondPersonsRefused: number;
  /** Tasks found cancelled when completed: a repair moved their token (a new task took their place). */
  cancelledUnderfoot: number;
  /** Calls that failed (Firestore restarting under them) and were sent again. */
  retries: number;
  /** Approvers' answers to items of "Ask the approvers" that completed their item. */
  answered: number;
  /** Approvers' answers refused because the item had been terminated when the completion condition held (late answers). */
  lateRefused: number;
  /** Every approver's answer to an item's task, and how it ended. */
  answers: ApproverAnswer[];
  /** Answers that break the promise, one line each. */
  wrong: string[];
}

/** One approver's answer to an item's task of "Ask the approvers", as the approver saw it end. */
export interface ApproverAnswer {
  readonly workOrderId: string;
  readonly taskId: string;
  /** The item's instance (the task's processInstanceId). */
  readonly itemInstanceId: string;
  readonly approver: string;
  readonly approves: boolean;
  /** COMPLETED: it completed the item; TERMINATED: refused, the completion condition had ended the item; MOVED: refused, a repair had moved the item's (or the activity's) token. */
  readonly outcome: 'COMPLETED' | 'TERMINATED' | 'MOVED';
  /** When its first call went out, and when the approver had its final answer (ms, the run's clock): an answer sent after another's was taken comes after it. */
  readonly sentAt: number;
  readonly doneAt: number;
}

export const emptyApproverTally = (): ApproverTally => ({
  completed: 0,
  landedDespiteFailure: 0,
  repeatsAnswered: 0,
  secondPersonsRefused: 0,
  cancelledUnderfoot: 0,
  retries: 0,
  answered: 0,
  lateRefused: 0,
  answers: [],
  wrong: [],
});

export interface Approver {
  /** Tasks seen and not finished yet (waiting for their planned moment, or being completed). */
  inFlight(): number;
  /** Stops looking for tasks, waits for those under way, and returns the tally. */
  stop(): Promise<ApproverTally>;
}

export interface ApproverDeps {
  readonly inspections: readonly PlannedInspection[];
  /** The CLI as the approver (INBOX_OPERATOR "chaos approver"). */
  readonly cli: OperatorCli;
  /** The CLI as a second planner, who tries to complete a task the approver completed. */
  readonly secondPerson: OperatorCli;
  readonly progress: (line: string) => void;
}

/** How often the approver looks at the task list; how many completions run at once; how often one call is tried. */
const LIST_EVERY_MS = 300;
const AT_ONCE = 4;
const ATTEMPTS = 120;
const RETRY_AFTER_MS = 500;

interface ListedTask {
  readonly id: string;
  readonly processInstanceId: string;
  readonly activityId: string;
  readonly businessKey: string;
  readonly createdAt: string;
}

type Answer = 'COMPLETED' | 'ALREADY_COMPLETED' | 'CANCELLED' | 'REFUSED';

/** Why a cancelled task was cancelled, from the CLI's refusal ("… is cancelled: REASON"). */
const cancelReason = (err: string): string => / is cancelled: (.*)$/m.exec(err)?.[1]?.trim() ?? err.trim();
const MOVED_BY_A_REPAIR = /^a repair moved its token to /;

export function startApprover(deps: ApproverDeps): Approver {
  const tally = emptyApproverTally();
  const planned = new Map(deps.inspections.map((i) => [i.workOrderId, i]));
  const seen = new Set<string>();
  const running = new Set<Promise<void>>();
  let stopped = false;
  let calls = 0;

  /** One CLI call at a time per slot (at most AT_ONCE at once), as a few people at their terminals; `sent` when it goes out. */
  const call = async (cli: OperatorCli, argv: readonly string[], sent?: () => void): ReturnType<OperatorCli> => {
    while (calls >= AT_ONCE) await sleep(50);
    calls += 1;
    sent?.();
    try {
      return await cli(argv);
    } finally {
      calls -= 1;
    }
  };

  /** `inbox tasks complete` until it answers (a failure is sent again with the same request id); how, after how many calls, why a cancelled one was, and when the first call went out. */
  const complete = async (
    cli: OperatorCli,
    id: string,
    requestId: string,
    variables: Readonly<Record<string, unknown>> = { approved: true },
  ): Promise<{ answer: Answer; calls: number; reason: string; sentAt: number }> => {
    const argv = ['--json', 'tasks', 'complete', id, '--vars', JSON.stringify(variables), '--request-id', requestId];
    let sentAt = 0;
    const first = (): void => {
      if (sentAt === 0) sentAt = Date.now();
    };
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const r = await call(cli, argv, first);
      if (r.code === 0)
        return { answer: (JSON.parse(r.out) as { status: Answer }).status, calls: attempt, reason: '', sentAt };
      if (/ is cancelled: /.test(r.err))
        return { answer: 'CANCELLED', calls: attempt, reason: cancelReason(r.err), sentAt };
      if (/ is already completed by |no user task /.test(r.err))
        return { answer: 'REFUSED', calls: attempt, reason: r.err.trim(), sentAt };
      tally.retries += 1;
      await sleep(RETRY_AFTER_MS);
    }
    throw new Error(`inbox tasks complete ${id}: no answer after ${ATTEMPTS} calls`);
  };

  /** Each work order's items as `inbox instances` last listed them: item instance → its approver. */
  const itemsOf = new Map<string, Map<string, string>>();
  /** Whose approval an item's task is: the item's `approver`, from `inbox instances BUSINESS_KEY` (again while it fails or lists the item not yet). */
  const approverOf = async (task: ListedTask): Promise<string> => {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const known = itemsOf.get(task.businessKey)?.get(task.processInstanceId);
      if (known !== undefined) return known;
      const r = await call(deps.cli, ['--json', 'instances', task.businessKey]);
      if (r.code === 0) {
        const listed = JSON.parse(r.out) as Array<{ id: string; variables?: Record<string, unknown> }>;
        const items = new Map<string, string>();
        for (const i of listed) {
          const name = i.variables?.[APPROVALS.elementVariable];
          if (typeof name === 'string') items.set(i.id, name);
        }
        itemsOf.set(task.businessKey, items);
        if (items.has(task.processInstanceId)) continue;
      } else tally.retries += 1;
      await sleep(RETRY_AFTER_MS);
    }
    throw new Error(`item ${task.processInstanceId.slice(0, 12)} of task ${task.id.slice(0, 12)}: no approver found`);
  };

  /** An approver's answer to an item's task of "Ask the approvers", at the time planned for them. */
  const answer = async (task: ListedTask, order: PlannedInspection): Promise<void> => {
    const name = await approverOf(task);
    const approver = order.approvers.find((a) => a.name === name);
    if (approver === undefined) {
      tally.wrong.push(`${task.businessKey}: an item's task for approver ${name}, who was not asked`);
      return;
    }
    await sleep(Math.max(0, Date.parse(task.createdAt) + approver.answerAfterMs - Date.now()));
    const said = await complete(deps.cli, task.id, answerRequestId(task.id), {
      [APPROVALS.answerVariable]: approver.approves,
    });
    const doneAt = Date.now();
    const log = (outcome: ApproverAnswer['outcome']): number =>
      tally.answers.push({
        workOrderId: task.businessKey,
        taskId: task.id,
        itemInstanceId: task.processInstanceId,
        approver: name,
        approves: approver.approves,
        outcome,
        sentAt: said.sentAt,
        doneAt,
      });
    if (said.answer === 'COMPLETED' || (said.answer === 'ALREADY_COMPLETED' && said.calls > 1)) {
      tally.answered += 1;
      if (said.answer === 'ALREADY_COMPLETED') tally.landedDespiteFailure += 1;
      log('COMPLETED');
    } else if (said.answer === 'CANCELLED' && said.reason === TERMINATED_BY_CONDITION) {
      tally.lateRefused += 1;
      log('TERMINATED');
    } else if (said.answer === 'CANCELLED' && MOVED_BY_A_REPAIR.test(said.reason)) {
      tally.cancelledUnderfoot += 1;
      log('MOVED');
    } else
      tally.wrong.push(
        `${task.businessKey}: ${name}'s answer to ${task.id.slice(0, 12)} answered ${said.answer}${said.reason === '' ? '' : ` (${said.reason})`}`,
      );
  };

  const handle = async (task: ListedTask): Promise<void> => {
    const order = planned.get(task.businessKey);
    if (order !== undefined && task.activityId === APPROVALS.activityId) return answer(task, order);
    if (order === undefined || task.activityId !== INSPECTION.userTaskId) {
      tally.wrong.push(
        `user task ${task.id.slice(0, 12)} of ${task.businessKey} at ${task.activityId}: no inspected order has it`,
      );
      return;
    }
    await sleep(Math.max(0, Date.parse(task.createdAt) + order.approveAfterMs - Date.now()));
    const requestId = approvalRequestId(task.id);
    const first = await complete(deps.cli, task.id, requestId);
    if (first.answer === 'CANCELLED') {
      tally.cancelledUnderfoot += 1;
      return;
    }
    // ALREADY_COMPLETED at once: another request had this request id.
    if (first.answer === 'REFUSED' || (first.answer === 'ALREADY_COMPLETED' && first.calls === 1)) {
      tally.wrong.push(
        `${task.businessKey}: the approver's completion of ${task.id.slice(0, 12)} answered ${first.answer}`,
      );
      return;
    }
    tally.completed += 1;
    if (first.answer === 'ALREADY_COMPLETED') tally.landedDespiteFailure += 1;
    if (order.repeat) {
      const again = await complete(deps.cli, task.id, requestId);
      if (again.answer === 'ALREADY_COMPLETED') tally.repeatsAnswered += 1;
      else
        tally.wrong.push(
          `${task.businessKey}: the repeated completion answered ${again.answer}, not ALREADY_COMPLETED`,
        );
    }
    if (order.secondPerson) {
      const other = await complete(deps.secondPerson, task.id, `second-${task.id}`);
      if (other.answer === 'REFUSED') tally.secondPersonsRefused += 1;
      else tally.wrong.push(`${task.businessKey}: a second person's completion answered ${other.answer}, not refused`);
    }
  };

  const look = async (): Promise<void> => {
    while (!stopped) {
      const listed = await call(deps.cli, ['--json', 'tasks', 'list', '--status', 'OPEN', '--page-size', '200']);
      // A list that failed (Firestore restarting) is tried again at the next look.
      const tasks = listed.code === 0 ? (JSON.parse(listed.out) as { tasks: ListedTask[] }).tasks : [];
      for (const task of tasks.filter((t) => !seen.has(t.id))) {
        seen.add(task.id);
        const done: Promise<void> = handle(task)
          .catch((err: unknown) => {
            tally.wrong.push(`${task.businessKey}: ${err instanceof Error ? err.message : String(err)}`);
          })
          .finally(() => running.delete(done));
        running.add(done);
      }
      await sleep(LIST_EVERY_MS);
    }
  };
  const looking = look();
  return {
    inFlight: () => running.size,
    async stop() {
      stopped = true;
      await looking;
      await Promise.all([...running]);
      deps.progress(
        `approver: ${tally.completed} user tasks completed and ${tally.answered} approvers' answers taken (${tally.landedDespiteFailure} by a retry that found its failed call committed), ${tally.lateRefused} late answers refused, ${tally.repeatsAnswered} repeats answered already completed, ${tally.secondPersonsRefused} second persons refused, ${tally.cancelledUnderfoot} cancelled by a repair, ${tally.retries} calls retried`,
      );
      return tally;
    },
  };
}
