import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BpmnError, type AppContext, type StepContext } from '../../../../functions/src/app';
import { parseProcessModel } from '../../../../functions/src/bpmn/parse-model';
import { INSPECTION, inspectionSteps } from '../../chaos/app/inspection';
import { emptyApproverTally, type ApproverTally } from '../../chaos/approver';
import { evaluateInspections } from '../../chaos/evaluate-inspection';
import { DEFAULT_SIZES, planChaos, type ChaosSizes } from '../../chaos/plan';
import { approvalRequestId, type PlannedInspection } from '../../chaos/plan-inspection';
import type { ChaosSnapshot } from '../../chaos/snapshot';

const sizes = (over: Partial<ChaosSizes> = {}): ChaosSizes => ({
  ...DEFAULT_SIZES,
  orders: 60,
  messages: 300,
  inspections: 12,
  ...over,
});

describe('chaos plan: the second model', () => {
  test('the asked number, among the orders that race nothing, half with findings; the rest of the plan unchanged', () => {
    const plan = planChaos(sizes({ seed: 9 }));
    const racing = new Set(plan.races.map((r) => r.workOrderId));
    expect(plan.inspections).toHaveLength(12);
    expect(plan.inspections.filter((i) => racing.has(i.workOrderId))).toEqual([]);
    expect(new Set(plan.inspections.map((i) => i.workOrderId)).size).toBe(12);
    expect(plan.inspections.filter((i) => i.findings > 0)).toHaveLength(6);
    expect(plan.inspections.filter((i) => i.repeat)).toHaveLength(6);
    expect(plan.inspections.filter((i) => i.secondPerson)).toHaveLength(3);
    // Repeats and second persons meet orders with findings and without.
    expect(new Set(plan.inspections.filter((i) => i.repeat).map((i) => i.findings > 0)).size).toBe(2);
    expect(planChaos(sizes({ seed: 9 })).inspections).toEqual(plan.inspections);
    const without = planChaos(sizes({ seed: 9, inspections: 0 }));
    expect(without.inspections).toEqual([]);
    expect({ steps: without.steps, races: without.races, faults: without.faults, repairs: without.repairs }).toEqual({
      steps: plan.steps,
      races: plan.races,
      faults: plan.faults,
      repairs: plan.repairs,
    });
  });

  test('at most the orders that race nothing', () => {
    const plan = planChaos(sizes({ orders: 20, messages: 100, inspections: 1_000 }));
    expect(plan.inspections).toHaveLength(20 - plan.races.length);
  });

  test('the model: a parallel fork and join of three branches, an error boundary on the inspection, a user task', async () => {
    const model = await parseProcessModel(
      readFileSync(join(__dirname, '../../chaos/bpmn/work-order-inspection.bpmn'), 'utf8'),
    );
    expect(model.key).toBe(INSPECTION.processKey);
    expect(model.nodes.fork).toMatchObject({ kind: 'parallelGateway', outgoing: expect.any(Array) as unknown });
    expect(model.nodes.fork?.outgoing).toHaveLength(INSPECTION.branches);
    expect(model.nodes[INSPECTION.joinId]).toMatchObject({ kind: 'parallelGateway' });
    expect(model.nodes[INSPECTION.joinId]?.incoming).toHaveLength(INSPECTION.branches);
    expect(model.nodes[INSPECTION.errorBoundaryId]).toMatchObject({
      kind: 'boundaryError',
      attachedToId: INSPECTION.inspectTaskId,
      errorCode: INSPECTION.errorCode,
    });
    expect(model.nodes[INSPECTION.userTaskId]?.kind).toBe('userTask');
  });

  test('"Inspect work order" throws DEFECTS_FOUND exactly for findings above 0', async () => {
    const inspect = inspectionSteps({} as AppContext)[INSPECTION.inspectTaskId];
    const run = (findings: unknown): ReturnType<NonNullable<typeof inspect>> =>
      (inspect as NonNullable<typeof inspect>)({
        instance: { variables: { workOrderId: 'WO-1', [INSPECTION.findingsVariable]: findings }, businessKey: 'WO-1' },
      } as unknown as StepContext);
    await expect(run(3)).rejects.toMatchObject({ name: 'BpmnError', code: INSPECTION.errorCode });
    await expect(run(3)).rejects.toBeInstanceOf(BpmnError);
    await expect(run(0)).resolves.toEqual({ inspection: 'PASSED' });
    await expect(run(undefined)).resolves.toEqual({ inspection: 'PASSED' });
  });
});

const orders: PlannedInspection[] = [
  { workOrderId: 'WO-A', findings: 2, approveAfterMs: 0, repeat: true, secondPerson: false },
  { workOrderId: 'WO-B', findings: 0, approveAfterMs: 0, repeat: false, secondPerson: true },
];
const ENDED_AT = (activityId: string, id: string): { id: string; status: string; activityId: string } => ({
  id,
  status: 'ENDED',
  activityId,
});

/** What a perfect run leaves of the two orders: through the join once, WO-A by the error path, one task completed each. */
function perfect(): ChaosSnapshot {
  const instances = orders.map((o) => ({
    id: `pi-${o.workOrderId}`,
    processKey: INSPECTION.processKey,
    businessKey: o.workOrderId,
    status: 'COMPLETED',
    correlatedMessages: [] as string[],
    tokens: [ENDED_AT('fork', 't0'), ENDED_AT('join', 't1'), ENDED_AT('join', 't2'), ENDED_AT('end', 't3')],
    jobs: [
      { activityId: 'handOverWorkOrder', status: 'DONE', lastError: null },
      o.findings > 0
        ? { activityId: INSPECTION.inspectTaskId, status: 'DONE', lastError: 'BPMN error DEFECTS_FOUND: 2 findings' }
        : { activityId: INSPECTION.inspectTaskId, status: 'DONE', lastError: null },
      ...(o.findings > 0 ? [{ activityId: INSPECTION.defectsTaskId, status: 'DONE', lastError: null }] : []),
      { activityId: 'createInvoice', status: 'DONE', lastError: null },
    ] as Array<{ activityId: string; status: string; lastError: string | null }>,
    repairs: [] as Array<{ kind: string; executionId: string | null }>,
  }));
  return {
    inbox: [],
    instances,
    invoiceJobs: [],
    invoices: [],
    timers: [],
    escalations: [],
    userTasks: orders.map((o) => ({
      id: `task-${o.workOrderId}`,
      processInstanceId: `pi-${o.workOrderId}`,
      activityId: INSPECTION.userTaskId,
      status: 'COMPLETED',
      completionRequestId: approvalRequestId(`task-${o.workOrderId}`),
      completedBy: 'chaos approver',
    })),
    defects: [{ workOrderId: 'WO-A', processInstanceId: 'pi-WO-A' }],
  };
}
const approved = (): ApproverTally => ({
  ...emptyApproverTally(),
  completed: 2,
  repeatsAnswered: 1,
  secondPersonsRefused: 1,
});
const ofA = (s: ChaosSnapshot, change: (i: ChaosSnapshot['instances'][number]) => object): ChaosSnapshot => ({
  ...s,
  instances: s.instances.map((i) => (i.businessKey === 'WO-A' ? { ...i, ...change(i) } : i)),
});

describe('chaos evaluation: the second model', () => {
  test('a perfect run: both through the join, the error path for the one with findings, one task completed each', () => {
    expect(evaluateInspections(orders, perfect(), approved())).toEqual({
      orders: 2,
      throughJoin: 2,
      defectsPlanned: 1,
      errorPaths: 1,
      userTasksCompleted: 2,
      repeatsAnswered: 1,
      secondPersonsRefused: 1,
      stuck: 0,
      violations: [],
    });
  });

  const broken: Array<[string, (s: ChaosSnapshot) => ChaosSnapshot, ApproverTally, string]> = [
    [
      'a token left waiting at the join',
      (s) =>
        ofA(s, (i) => ({
          status: 'RUNNING',
          tokens: [...i.tokens, { id: 't9', status: 'WAITING_JOIN', activityId: 'join' }],
        })),
      approved(),
      'tokens left at join (WAITING_JOIN)',
    ],
    [
      'the join passed twice (four tokens ended there)',
      (s) =>
        ofA(s, (i) => ({
          tokens: [...i.tokens, ENDED_AT('join', 't7'), ENDED_AT('join', 't8'), ENDED_AT('end', 't9')],
        })),
      approved(),
      '4 tokens ended at the join and 2 at the end',
    ],
    [
      'no error path for the order with findings',
      (s) => ({
        ...ofA(s, (i) => ({ jobs: i.jobs.filter((j) => j.activityId !== INSPECTION.defectsTaskId) })),
        defects: [],
      }),
      approved(),
      'expected the error path once',
    ],
    [
      'the error path for the order without findings',
      (s) => ({ ...s, defects: [...s.defects, { workOrderId: 'WO-B', processInstanceId: 'pi-WO-B' }] }),
      approved(),
      'no findings: expected one passed inspection and no error path',
    ],
    [
      'two user tasks completed for one order',
      (s) => ({
        ...s,
        userTasks: [...s.userTasks, { ...(s.userTasks[0] as ChaosSnapshot['userTasks'][number]), id: 'x' }],
      }),
      approved(),
      '2 user tasks COMPLETED',
    ],
    [
      'a user task completed by another request',
      (s) => ({ ...s, userTasks: s.userTasks.map((t, n) => (n === 0 ? { ...t, completionRequestId: 'other' } : t)) }),
      approved(),
      'completed by request other',
    ],
    [
      'a user task cancelled with no repair that moved its token',
      (s) => ({
        ...s,
        userTasks: [
          ...s.userTasks,
          { ...(s.userTasks[1] as ChaosSnapshot['userTasks'][number]), id: 'y', status: 'CANCELLED' },
        ],
      }),
      approved(),
      'but no repair moved its token',
    ],
    [
      'a repeat that was not answered "already completed"',
      (s) => s,
      { ...approved(), repeatsAnswered: 0 },
      '0 of 1 repeated completions',
    ],
    [
      'a wrong answer to the approver',
      (s) => s,
      { ...approved(), wrong: ['WO-B: a second person got through'] },
      'approver: WO-B',
    ],
  ];
  test.each(broken)('%s is caught', (_name, breakIt, tally, violation) => {
    const counts = evaluateInspections(orders, breakIt(perfect()), tally);
    expect(counts.violations.join('\n')).toContain(violation);
  });

  test('a task cancelled because a repair moved its token, and its new task completed, is fine', () => {
    const s = perfect();
    const moved = ofA(s, () => ({ repairs: [{ kind: 'move-token', executionId: 't1' }] }));
    const cancelled = { ...(s.userTasks[0] as ChaosSnapshot['userTasks'][number]), id: 'old', status: 'CANCELLED' };
    expect(
      evaluateInspections(orders, { ...moved, userTasks: [...s.userTasks, cancelled] }, approved()).violations,
    ).toEqual([]);
  });
});
