/**
 * Pure evaluation of the second model's work orders (plan-inspection.ts):
 * each ran work-order-inspection once, COMPLETED, with no token left;
 * passed its join exactly once (two of the three branches' tokens ended at
 * the join, one went on to the end); went round its inspection's error
 * boundary loop exactly once per finding (k inspections ended by the
 * caught BPMN error DEFECTS_FOUND, k "Record the defects" jobs and k
 * defect records, one per round: k, k - 1, … 1 findings left), then passed
 * the inspection once, at the end, with no finding left, never round more
 * often (a round run twice would lower the findings twice); had its user
 * task completed exactly once, by the approver's request (a task
 * cancelled on the way only where a repair moved its token); and ended
 * "Ask the approvers" once, as its completion condition says
 * (evaluate-approvals.ts). The approver's answers are held to the promise
 * too: a repeat answered "already completed", a second person refused, a
 * late answer to a terminated item refused. Its invoice is judged with
 * every other work order's (evaluate.ts).
 */
import { STALE_JOB_ERROR } from '../../../functions/src/engine/state';
import { INSPECTION } from './app/inspection';
import type { ApproverTally } from './approver';
import { judgeApprovals } from './evaluate-approvals';
import { approvalRequestId, type PlannedInspection } from './plan-inspection';
import type { ChaosSnapshot } from './snapshot';

export interface InspectionCounts {
  /** Work orders planned on the second model. */
  readonly orders: number;
  /** COMPLETED through the join exactly once, no token left. */
  readonly throughJoin: number;
  /** Orders planned with findings (the error loop is theirs), the rounds planned (their findings), the rounds taken (caught DEFECTS_FOUND) and the defect records. */
  readonly defectsPlanned: number;
  readonly roundsPlanned: number;
  readonly rounds: number;
  readonly defectRecords: number;
  /** Orders whose inspection passed once, at the end, with no finding left, after exactly as many rounds as findings. */
  readonly passedAtEnd: number;
  /** User tasks COMPLETED (one per order), by the approver's request. */
  readonly userTasksCompleted: number;
  /** The approver's repeats answered ALREADY_COMPLETED, and second persons refused. */
  readonly repeatsAnswered: number;
  readonly secondPersonsRefused: number;
  /** "Ask the approvers" ended once, when its condition first held or after its last item (evaluate-approvals.ts), by which. */
  readonly approvalsEnded: number;
  readonly endedByCondition: number;
  readonly endedAllAnswered: number;
  /** Output collections that hold exactly the answers of the items that completed. */
  readonly outputsExact: number;
  /** Approvers' answers refused because their item had been terminated (as the approver saw them). */
  readonly lateAnswersRefused: number;
  /** "Tally the approvals" ran once. */
  readonly talliedOnce: number;
  /** Not completed, or with a token left somewhere. */
  readonly stuck: number;
  readonly violations: readonly string[];
}

type Instance = ChaosSnapshot['instances'][number];
const LIVE = (status: string): boolean => status !== 'ENDED' && status !== 'CANCELLED';
const caughtError = `BPMN error ${INSPECTION.errorCode}:`;

/** What one order came to. */
interface Verdict {
  readonly violations: string[];
  readonly throughJoin: boolean;
  readonly stuck: boolean;
  readonly tasksCompleted: number;
  readonly rounds: number;
  readonly records: number;
  readonly passedAtEnd: boolean;
}

/** The inspection's error boundary loop: k rounds for k findings, each recorded once, then one pass at the end. */
function judgeLoop(
  order: PlannedInspection,
  instance: Instance,
  snapshot: ChaosSnapshot,
  say: (what: string) => void,
): { rounds: number; records: number; passedAtEnd: boolean } {
  const jobs = instance.jobs.filter((j) => j.lastError !== STALE_JOB_ERROR);
  const inspections = jobs.filter((j) => j.activityId === INSPECTION.inspectTaskId);
  const caught = inspections.filter((j) => j.status === 'DONE' && j.lastError?.startsWith(caughtError) === true);
  const passed = inspections.filter((j) => j.status === 'DONE' && j.lastError === null);
  const recorded = jobs.filter((j) => j.activityId === INSPECTION.defectsTaskId);
  const records = snapshot.defects.filter((d) => d.workOrderId === order.workOrderId);
  const k = order.findings;
  const rounds = [...records].map((d) => d.findingsLeft).sort((a, b) => b - a);
  const plannedRounds = Array.from({ length: k }, (_, i) => k - i);
  if (caught.length > k)
    say(
      `${k} findings, but the inspection went round ${caught.length} times (caught DEFECTS_FOUND): a round ran twice or never lowered the findings`,
    );
  if (caught.length !== k || recorded.length !== k || recorded.some((j) => j.status !== 'DONE'))
    say(
      `${k} findings: expected ${k} rounds, got ${caught.length} caught errors and ${recorded.length} "Record the defects" jobs (${recorded.map((j) => j.status).join(', ') || 'none'})`,
    );
  if (JSON.stringify(rounds) !== JSON.stringify(plannedRounds))
    say(
      `defect records for ${rounds.join(', ') || 'no'} findings left, expected ${plannedRounds.join(', ') || 'none'}`,
    );
  for (const d of records.filter((r) => r.processInstanceId !== instance.id))
    say(`a defect record of instance ${d.processInstanceId.slice(0, 12)}, not of ${instance.id.slice(0, 12)}`);
  const lastCaught = Math.max(0, ...caught.map((j) => j.finishedAt ?? 0));
  const [pass] = passed;
  const passedLast = passed.length === 1 && pass !== undefined && (pass.finishedAt ?? 0) >= lastCaught;
  if (!passedLast)
    say(
      `expected one passed inspection after the last round, got ${passed.length}${passed.length === 1 ? ' before a round' : ''}`,
    );
  const left = instance.variables[INSPECTION.findingsVariable];
  const outcome = instance.variables[INSPECTION.outcomeVariable];
  if (left !== 0 || outcome !== 'PASSED')
    say(
      `ended with ${INSPECTION.findingsVariable} ${JSON.stringify(left)} and ${INSPECTION.outcomeVariable} ${JSON.stringify(outcome)}, expected 0 and "PASSED"`,
    );
  return {
    rounds: caught.length,
    records: records.length,
    passedAtEnd:
      passedLast &&
      caught.length === k &&
      recorded.length === k &&
      JSON.stringify(rounds) === JSON.stringify(plannedRounds) &&
      left === 0,
  };
}

/** Its violations, and whether it went through the join once, round its loop as planned, and ended the approvals once. */
function judge(
  order: PlannedInspection,
  instance: Instance,
  snapshot: ChaosSnapshot,
  approvals: ApproverTally | null,
): Verdict & { approvals: ReturnType<typeof judgeApprovals> } {
  const v: string[] = [];
  const say = (what: string): number => v.push(`inspection ${order.workOrderId}: ${what}`);
  if (instance.processKey !== INSPECTION.processKey) say(`runs ${instance.processKey}, not ${INSPECTION.processKey}`);
  const live = instance.tokens.filter((t) => LIVE(t.status));
  const stuck = instance.status !== 'COMPLETED' || live.length > 0;
  if (stuck)
    say(`${instance.status}, tokens left at ${live.map((t) => `${t.activityId} (${t.status})`).join(', ') || 'none'}`);
  // At the join, one waiting token per incoming flow is consumed: the last to come goes on, the others end there.
  const endedAtJoin = instance.tokens.filter((t) => t.status === 'ENDED' && t.activityId === INSPECTION.joinId).length;
  const endedAtEnd = instance.tokens.filter((t) => t.status === 'ENDED' && t.activityId === 'end').length;
  const throughJoin = !stuck && endedAtJoin === INSPECTION.branches - 1 && endedAtEnd === 1;
  if (!stuck && !throughJoin)
    say(
      `${endedAtJoin} tokens ended at the join and ${endedAtEnd} at the end, expected ${INSPECTION.branches - 1} and 1`,
    );
  for (const j of instance.jobs.filter((x) => x.status === 'FAILED'))
    say(`a ${j.activityId} job FAILED: ${j.lastError ?? ''}`);
  const loop = judgeLoop(order, instance, snapshot, (what) => void say(what));

  const tasks = snapshot.userTasks.filter((t) => t.processInstanceId === instance.id);
  const completed = tasks.filter((t) => t.status === 'COMPLETED');
  const moved = instance.repairs.some((r) => r.kind === 'move-token');
  if (completed.length !== 1) say(`${completed.length} user tasks COMPLETED, expected 1`);
  for (const t of completed)
    if (t.completionRequestId !== approvalRequestId(t.id))
      say(
        `user task ${t.id.slice(0, 12)} completed by request ${t.completionRequestId ?? '?'} (${t.completedBy ?? '?'})`,
      );
  for (const t of tasks.filter((x) => x.status === 'OPEN')) say(`user task ${t.id.slice(0, 12)} still OPEN`);
  const cancelled = tasks.filter((t) => t.status === 'CANCELLED').length;
  if (cancelled > 0 && !moved) say(`${cancelled} user tasks CANCELLED, but no repair moved its token`);
  for (const t of tasks.filter((x) => x.activityId !== INSPECTION.userTaskId))
    say(`a user task at ${t.activityId}, which the model does not have`);
  const verdict = judgeApprovals(order, instance, snapshot, approvals?.answers ?? null);
  v.push(...verdict.violations);
  return {
    violations: v,
    throughJoin,
    stuck: stuck || verdict.stuck,
    tasksCompleted: completed.length,
    ...loop,
    approvals: verdict,
  };
}

/** `approvals`: what the approver saw (null: not held to it, as in a test of the store alone). */
export function evaluateInspections(
  inspections: readonly PlannedInspection[],
  snapshot: ChaosSnapshot,
  approvals: ApproverTally | null,
): InspectionCounts {
  const violations: string[] = [];
  let throughJoin = 0;
  let stuck = 0;
  let userTasksCompleted = 0;
  const sums = {
    rounds: 0,
    defectRecords: 0,
    passedAtEnd: 0,
    approvalsEnded: 0,
    endedByCondition: 0,
    endedAllAnswered: 0,
    outputsExact: 0,
    talliedOnce: 0,
  };
  const planned = new Set(inspections.map((i) => i.workOrderId));
  for (const order of inspections) {
    // The top-level instance: the items of "Ask the approvers" have its business key too.
    const instances = snapshot.instances.filter((i) => i.businessKey === order.workOrderId && i.calledBy === null);
    const [instance] = instances;
    if (instance === undefined || instances.length > 1) {
      // Two instances are the general evaluation's violation; none means the order never started.
      if (instance === undefined) violations.push(`inspection ${order.workOrderId}: no process instance`);
      stuck += 1;
      continue;
    }
    const verdict = judge(order, instance, snapshot, approvals);
    violations.push(...verdict.violations);
    if (verdict.throughJoin) throughJoin += 1;
    if (verdict.stuck) stuck += 1;
    userTasksCompleted += verdict.tasksCompleted;
    sums.rounds += verdict.rounds;
    sums.defectRecords += verdict.records;
    if (verdict.passedAtEnd) sums.passedAtEnd += 1;
    const a = verdict.approvals;
    if (a.endedOnce) sums.approvalsEnded += 1;
    if (a.endedOnce && a.by === 'condition') sums.endedByCondition += 1;
    if (a.endedOnce && a.by === 'all answered') sums.endedAllAnswered += 1;
    if (a.outputExact) sums.outputsExact += 1;
    if (a.talliedOnce) sums.talliedOnce += 1;
  }
  // The first model has no user task and no inspection: nothing of the second may show on its orders.
  for (const instance of snapshot.instances.filter((i) => !planned.has(i.businessKey)))
    if (instance.processKey.split('#')[0] === INSPECTION.processKey)
      violations.push(`${instance.businessKey}: runs ${INSPECTION.processKey}, but was not planned to`);
  if (approvals !== null) {
    violations.push(...approvals.wrong.map((w) => `approver: ${w}`));
    const repeats = inspections.filter((i) => i.repeat).length;
    const seconds = inspections.filter((i) => i.secondPerson).length;
    if (approvals.repeatsAnswered !== repeats)
      violations.push(
        `approver: ${approvals.repeatsAnswered} of ${repeats} repeated completions answered already completed`,
      );
    if (approvals.secondPersonsRefused !== seconds)
      violations.push(`approver: ${approvals.secondPersonsRefused} of ${seconds} second persons refused`);
    const late = approvals.answers.filter((a) => a.outcome === 'TERMINATED').length;
    if (approvals.lateRefused !== late)
      violations.push(`approver: ${approvals.lateRefused} late answers refused, but ${late} logged`);
  }
  return {
    orders: inspections.length,
    throughJoin,
    defectsPlanned: inspections.filter((i) => i.findings > 0).length,
    roundsPlanned: inspections.reduce((n, i) => n + i.findings, 0),
    rounds: sums.rounds,
    defectRecords: sums.defectRecords,
    passedAtEnd: sums.passedAtEnd,
    userTasksCompleted,
    repeatsAnswered: approvals?.repeatsAnswered ?? 0,
    secondPersonsRefused: approvals?.secondPersonsRefused ?? 0,
    approvalsEnded: sums.approvalsEnded,
    endedByCondition: sums.endedByCondition,
    endedAllAnswered: sums.endedAllAnswered,
    outputsExact: sums.outputsExact,
    lateAnswersRefused: approvals?.lateRefused ?? 0,
    talliedOnce: sums.talliedOnce,
    stuck,
    violations,
  };
}
