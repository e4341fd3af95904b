/**
 * Pure evaluation of the second model's work orders (plan-inspection.ts):
 * each ran work-order-inspection once, COMPLETED, with no token left;
 * passed its join exactly once (two of the three branches' tokens ended at
 * the join, one went on to the end); took the error path exactly when its
 * inspection had findings (the inspection job ended by BPMN error
 * DEFECTS_FOUND, one "Record the defects" job, one defect record) and never
 * otherwise; and had its user task completed exactly once, by the
 * approver's request (a task cancelled on the way only where a repair
 * moved its token). The approver's answers are held to the promise too: a
 * repeat answered "already completed", a second person refused. Its
 * invoice is judged with every other work order's (evaluate.ts).
 */
import { STALE_JOB_ERROR } from '../../../functions/src/engine/state';
import { INSPECTION } from './app/inspection';
import type { ApproverTally } from './approver';
import { approvalRequestId, type PlannedInspection } from './plan-inspection';
import type { ChaosSnapshot } from './snapshot';

export interface InspectionCounts {
  /** Work orders planned on the second model. */
  readonly orders: number;
  /** COMPLETED through the join exactly once, no token left. */
  readonly throughJoin: number;
  /** Orders planned with findings (the error path is theirs), and orders that took the error path. */
  readonly defectsPlanned: number;
  readonly errorPaths: number;
  /** User tasks COMPLETED (one per order), by the approver's request. */
  readonly userTasksCompleted: number;
  /** The approver's repeats answered ALREADY_COMPLETED, and second persons refused. */
  readonly repeatsAnswered: number;
  readonly secondPersonsRefused: number;
  /** Not completed, or with a token left somewhere. */
  readonly stuck: number;
  readonly violations: readonly string[];
}

type Instance = ChaosSnapshot['instances'][number];
const LIVE = (status: string): boolean => status !== 'ENDED' && status !== 'CANCELLED';
const caughtError = `BPMN error ${INSPECTION.errorCode}:`;

/** Its violations, and whether it took the error path and went through the join once. */
function judge(
  order: PlannedInspection,
  instance: Instance,
  snapshot: ChaosSnapshot,
): { violations: string[]; errorPath: boolean; throughJoin: boolean; stuck: boolean; tasksCompleted: number } {
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

  const jobs = instance.jobs.filter((j) => j.lastError !== STALE_JOB_ERROR);
  const inspections = jobs.filter((j) => j.activityId === INSPECTION.inspectTaskId);
  const threw = inspections.filter((j) => j.status === 'DONE' && j.lastError?.startsWith(caughtError) === true).length;
  const passed = inspections.filter((j) => j.status === 'DONE' && j.lastError === null).length;
  const recorded = jobs.filter((j) => j.activityId === INSPECTION.defectsTaskId).length;
  const records = snapshot.defects.filter((d) => d.workOrderId === order.workOrderId).length;
  for (const j of jobs.filter((x) => x.status === 'FAILED')) say(`a ${j.activityId} job FAILED: ${j.lastError ?? ''}`);
  const errorPath = threw > 0 || recorded > 0 || records > 0;
  if (order.findings > 0 && (threw !== 1 || passed !== 0 || recorded !== 1 || records !== 1))
    say(
      `${order.findings} findings: expected the error path once, got ${threw} caught errors, ${passed} passed inspections, ${recorded} "Record the defects" jobs, ${records} defect records`,
    );
  if (order.findings === 0 && (errorPath || passed !== 1))
    say(
      `no findings: expected one passed inspection and no error path, got ${passed} passed, ${threw} caught errors, ${recorded} "Record the defects" jobs, ${records} defect records`,
    );

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
  return { violations: v, errorPath, throughJoin, stuck, tasksCompleted: completed.length };
}

/** `approvals`: what the approver saw (null: not held to it, as in a test of the store alone). */
export function evaluateInspections(
  inspections: readonly PlannedInspection[],
  snapshot: ChaosSnapshot,
  approvals: ApproverTally | null,
): InspectionCounts {
  const violations: string[] = [];
  let throughJoin = 0;
  let errorPaths = 0;
  let stuck = 0;
  let userTasksCompleted = 0;
  const planned = new Set(inspections.map((i) => i.workOrderId));
  for (const order of inspections) {
    const instances = snapshot.instances.filter((i) => i.businessKey === order.workOrderId);
    const [instance] = instances;
    if (instance === undefined || instances.length > 1) {
      // Two instances are the general evaluation's violation; none means the order never started.
      if (instance === undefined) violations.push(`inspection ${order.workOrderId}: no process instance`);
      stuck += 1;
      continue;
    }
    const verdict = judge(order, instance, snapshot);
    violations.push(...verdict.violations);
    if (verdict.throughJoin) throughJoin += 1;
    if (verdict.errorPath) errorPaths += 1;
    if (verdict.stuck) stuck += 1;
    userTasksCompleted += verdict.tasksCompleted;
  }
  // The first model has no user task and no inspection: nothing of the second may show on its orders.
  for (const instance of snapshot.instances.filter((i) => !planned.has(i.businessKey)))
    if (instance.processKey === INSPECTION.processKey)
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
  }
  return {
    orders: inspections.length,
    throughJoin,
    defectsPlanned: inspections.filter((i) => i.findings > 0).length,
    errorPaths,
    userTasksCompleted,
    repeatsAnswered: approvals?.repeatsAnswered ?? 0,
    secondPersonsRefused: approvals?.secondPersonsRefused ?? 0,
    stuck,
    violations,
  };
}
