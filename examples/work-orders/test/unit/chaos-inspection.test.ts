import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BpmnError, type AppContext, type StepContext } from '../../../../functions/src/app';
import { parseProcessModel } from '../../../../functions/src/bpmn/parse-model';
import { STALE_JOB_ERROR } from '../../../../functions/src/engine/state';
import { APPROVALS, INSPECTION, inspectionSteps, TERMINATED_BY_CONDITION } from '../../chaos/app/inspection';
import { emptyApproverTally, type ApproverAnswer, type ApproverTally } from '../../chaos/approver';
import { evaluateInspections } from '../../chaos/evaluate-inspection';
import { DEFAULT_SIZES, planChaos, type ChaosSizes } from '../../chaos/plan';
import { answerRequestId, approvalRequestId, type PlannedInspection } from '../../chaos/plan-inspection';
import { runawayLoop } from '../../chaos/settle';
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
    // 1 to 3 rounds of the error loop each.
    expect(plan.inspections.every((i) => i.findings >= 0 && i.findings <= 3)).toBe(true);
    expect(plan.inspections.filter((i) => i.repeat)).toHaveLength(6);
    expect(plan.inspections.filter((i) => i.secondPerson)).toHaveLength(3);
    // Repeats and second persons meet orders with findings and without.
    expect(new Set(plan.inspections.filter((i) => i.repeat).map((i) => i.findings > 0)).size).toBe(2);
    expect(planChaos(sizes({ seed: 9 })).inspections).toEqual(plan.inspections);
    const without = planChaos(sizes({ seed: 9, inspections: 0 }));
    expect(without.inspections).toEqual([]);
    // The deploy waits for half of each model's starts, so it moves with the inspections; nothing else does.
    const others = (faults: typeof plan.faults) => faults.filter((f) => f.kind !== 'deploy');
    expect({
      steps: without.steps,
      races: without.races,
      faults: others(without.faults),
      repairs: without.repairs,
    }).toEqual({
      steps: plan.steps,
      races: plan.races,
      faults: others(plan.faults),
      repairs: plan.repairs,
    });
  });

  test('the approvers: 2 to 4, at least one yes, but every third order, all no (two, then four)', () => {
    const plan = planChaos(sizes({ seed: 9, orders: 200, messages: 1_000, inspections: 60 }));
    const allNo = plan.inspections.filter((i) => i.approvers.every((a) => !a.approves));
    expect(allNo).toHaveLength(20);
    expect(new Set(allNo.map((i) => i.approvers.length))).toEqual(new Set([2, 4]));
    for (const order of plan.inspections) {
      expect(order.approvers.length).toBeGreaterThanOrEqual(2);
      expect(order.approvers.length).toBeLessThanOrEqual(4);
      expect(new Set(order.approvers.map((a) => a.name)).size).toBe(order.approvers.length);
    }
    const yes = plan.inspections.filter((i) => i.approvers.some((a) => a.approves));
    expect(yes).toHaveLength(40);
    // Some orders with more than one yes: whichever is answered first ends the activity.
    expect(yes.some((i) => i.approvers.filter((a) => a.approves).length > 1)).toBe(true);
  });

  test('at most the orders that race nothing', () => {
    const plan = planChaos(sizes({ orders: 20, messages: 100, inspections: 1_000 }));
    expect(plan.inspections).toHaveLength(20 - plan.races.length);
  });
});

describe('chaos: the second model and its steps', () => {
  test('the model: a fork and join of three branches, an error boundary loop round the inspection, the approvers', async () => {
    const model = await parseProcessModel(
      readFileSync(join(__dirname, '../../chaos/bpmn/work-order-inspection.bpmn'), 'utf8'),
    );
    const { nodes, flows } = model;
    const to = (from: string): string[] => (nodes[from]?.outgoing ?? []).map((id) => flows[id]?.targetId ?? '?');
    expect(model.key).toBe(INSPECTION.processKey);
    expect(nodes.fork?.outgoing).toHaveLength(INSPECTION.branches);
    expect(nodes[INSPECTION.joinId]).toMatchObject({ kind: 'parallelGateway' });
    expect(nodes[INSPECTION.joinId]?.incoming).toHaveLength(INSPECTION.branches);
    // The loop: the subprocess runs the inspection; its error boundary event goes through "Record the defects" back into it.
    expect(nodes[INSPECTION.inspectTaskId]).toMatchObject({ scope: INSPECTION.subprocessId, async: true });
    expect(nodes[INSPECTION.errorBoundaryId]).toMatchObject({
      kind: 'boundaryError',
      attachedToId: INSPECTION.subprocessId,
      errorCode: INSPECTION.errorCode,
    });
    expect(to(INSPECTION.errorBoundaryId)).toEqual([INSPECTION.defectsTaskId]);
    expect(nodes[INSPECTION.defectsTaskId]).toMatchObject({ async: true });
    expect(to(to(INSPECTION.defectsTaskId)[0] ?? '')).toEqual([INSPECTION.subprocessId]);
    expect(to(INSPECTION.subprocessId)).toEqual([INSPECTION.joinId]);
    // The approvers: a parallel multi-instance user task after the planner's, then the tally, then the join.
    expect(to(INSPECTION.userTaskId)).toEqual([APPROVALS.activityId]);
    expect(nodes[APPROVALS.activityId]).toMatchObject({
      kind: 'userTask',
      loop: {
        sequential: false,
        collection: APPROVALS.collectionVariable,
        elementVariable: APPROVALS.elementVariable,
        outputCollection: APPROVALS.outputVariable,
        outputElement: APPROVALS.answerVariable,
        completionConditionText: `\${${APPROVALS.answerVariable} == true || numberOfCompletedInstances >= ${APPROVALS.enoughAnswers}}`,
      },
    });
    expect(to(APPROVALS.activityId)).toEqual([APPROVALS.tallyTaskId]);
    expect(to(APPROVALS.tallyTaskId)).toEqual([INSPECTION.joinId]);
  });

  /** A Firestore of one collection in memory: create() refuses an id it holds, as Firestore's ALREADY_EXISTS. */
  function memoryDb(): { ctx: AppContext; docs: Map<string, Record<string, unknown>> } {
    const docs = new Map<string, Record<string, unknown>>();
    const db = {
      collection: (name: string) => ({
        doc: (id: string) => ({
          create: async (data: Record<string, unknown>) => {
            const key = `${name}/${id}`;
            if (docs.has(key)) throw Object.assign(new Error('ALREADY_EXISTS'), { code: 6 });
            docs.set(key, data);
          },
        }),
      }),
    };
    return { ctx: { db: () => db } as unknown as AppContext, docs };
  }
  const stepCtx = (variables: Record<string, unknown>, jobId = 'job-1'): StepContext =>
    ({
      job: { id: jobId },
      instance: { id: 'pi-1', variables: { workOrderId: 'WO-1', ...variables }, businessKey: 'WO-1' },
      now: new Date('2026-12-01T00:00:00Z'),
    }) as unknown as StepContext;

  test('"Inspect work order" throws DEFECTS_FOUND while findings are left', async () => {
    const inspect = inspectionSteps({} as AppContext)[INSPECTION.inspectTaskId];
    const run = (findings: unknown): ReturnType<NonNullable<typeof inspect>> =>
      (inspect as NonNullable<typeof inspect>)(stepCtx({ [INSPECTION.findingsVariable]: findings }));
    await expect(run(3)).rejects.toMatchObject({ name: 'BpmnError', code: INSPECTION.errorCode });
    await expect(run(1)).rejects.toBeInstanceOf(BpmnError);
    await expect(run(0)).resolves.toEqual({ inspection: 'PASSED' });
    await expect(run(undefined)).resolves.toEqual({ inspection: 'PASSED' });
  });

  test('"Record the defects" records its round once and lowers the findings by one, from its own job, however often it runs', async () => {
    const { ctx, docs } = memoryDb();
    const record = inspectionSteps(ctx)[INSPECTION.defectsTaskId] as NonNullable<
      ReturnType<typeof inspectionSteps>[string]
    >;
    await expect(record(stepCtx({ [INSPECTION.findingsVariable]: 3 }))).resolves.toMatchObject({
      [INSPECTION.findingsVariable]: 2,
    });
    // The same job again (its commit lost): the same round, found recorded, lowered from the same value.
    await expect(record(stepCtx({ [INSPECTION.findingsVariable]: 3 }))).resolves.toMatchObject({
      [INSPECTION.findingsVariable]: 2,
    });
    await expect(record(stepCtx({ [INSPECTION.findingsVariable]: 2 }, 'job-2'))).resolves.toMatchObject({
      [INSPECTION.findingsVariable]: 1,
    });
    expect([...docs.values()].map((d) => d.findingsLeft)).toEqual([3, 2]);
    await expect(record(stepCtx({ [INSPECTION.findingsVariable]: 0 }))).rejects.toMatchObject({
      name: 'PermanentJobError',
    });
  });

  test('"Tally the approvals" approves on a yes among the answers, nulls are items that never answered', async () => {
    const tally = inspectionSteps({} as AppContext)[APPROVALS.tallyTaskId] as NonNullable<
      ReturnType<typeof inspectionSteps>[string]
    >;
    const on = (answers: unknown): ReturnType<typeof tally> => tally(stepCtx({ [APPROVALS.outputVariable]: answers }));
    await expect(on([false, true, null])).resolves.toEqual({ approvalDecision: 'APPROVED', approvalsAnswered: 2 });
    await expect(on([false, false])).resolves.toEqual({ approvalDecision: 'REJECTED', approvalsAnswered: 2 });
    await expect(on(undefined)).resolves.toEqual({ approvalDecision: 'REJECTED', approvalsAnswered: 0 });
  });

  test('the settling stops waiting for an order that went round its loop more often than it has findings', () => {
    const plan = planChaos(sizes({ seed: 9 }));
    const order = plan.inspections.find((i) => i.findings === 1) as PlannedInspection;
    const runaway = runawayLoop(plan);
    const caught = { activityId: INSPECTION.inspectTaskId, status: 'DONE', lastError: 'BPMN error DEFECTS_FOUND: x' };
    expect(runaway({ businessKey: order.workOrderId, jobs: [caught] })).toBe(false);
    expect(runaway({ businessKey: order.workOrderId, jobs: [caught, caught] })).toBe(true);
    expect(runaway({ businessKey: order.workOrderId, jobs: [caught, { ...caught, lastError: STALE_JOB_ERROR }] })).toBe(
      false,
    );
    expect(runaway({ businessKey: 'WO-elsewhere', jobs: [caught, caught] })).toBe(false);
  });
});

type Instance = ChaosSnapshot['instances'][number];
type Task = ChaosSnapshot['userTasks'][number];
type Job = Instance['jobs'][number];

const approver = (name: string, approves: boolean): PlannedInspection['approvers'][number] => ({
  name,
  approves,
  answerAfterMs: 0,
});
/** WO-A: 2 findings, ben says yes (ana no, cleo never answers); WO-B: no findings, both say no (all answered). */
const orders: PlannedInspection[] = [
  {
    workOrderId: 'WO-A',
    findings: 2,
    approveAfterMs: 0,
    repeat: true,
    secondPerson: false,
    approvers: [approver('ana', false), approver('ben', true), approver('cleo', true)],
  },
  {
    workOrderId: 'WO-B',
    findings: 0,
    approveAfterMs: 0,
    repeat: false,
    secondPerson: true,
    approvers: [approver('ana', false), approver('ben', false)],
  },
];
const ENDED_AT = (activityId: string, id: string): { id: string; status: string; activityId: string } => ({
  id,
  status: 'ENDED',
  activityId,
});
const job = (activityId: string, lastError: string | null, finishedAt: number, status = 'DONE'): Job => ({
  activityId,
  status,
  lastError,
  finishedAt,
});
const BATCH = 'batch-1';
const itemId = (order: string, index: number, batch = BATCH): string => `item-${order}-${batch}-${index}`;

/** What a perfect run leaves: WO-A went round twice and passed, its items answered ana no, ben yes (cleo terminated); WO-B passed at once, both no. */
function perfect(): ChaosSnapshot {
  const items: Instance[] = [];
  const tasks: Task[] = [];
  const answers: Record<string, unknown[]> = { 'WO-A': [false, true, null], 'WO-B': [false, false] };
  for (const o of orders) {
    o.approvers.forEach((a, index) => {
      const answered = answers[o.workOrderId]?.[index] !== null;
      const id = itemId(o.workOrderId, index);
      items.push({
        id,
        processKey: APPROVALS.itemProcessKey,
        processVersion: 'v1',
        businessKey: o.workOrderId,
        status: 'COMPLETED',
        correlatedMessages: [],
        calledBy: { instanceId: `pi-${o.workOrderId}`, activityId: APPROVALS.activityId, index, batch: BATCH },
        terminated: answered ? null : TERMINATED_BY_CONDITION,
        variables: { approver: a.name, loopCounter: index + 1, ...(answered ? { approves: a.approves } : {}) },
        tokens: [
          { id: `t-${id}`, status: answered ? 'ENDED' : 'CANCELLED', activityId: answered ? '#end' : 'askApprovers' },
        ],
        jobs: [],
        repairs: [],
      });
      tasks.push({
        id: `task-${id}`,
        processInstanceId: id,
        activityId: APPROVALS.activityId,
        status: answered ? 'COMPLETED' : 'CANCELLED',
        completionRequestId: answered ? answerRequestId(`task-${id}`) : null,
        completedBy: answered ? 'chaos approver' : null,
        cancelReason: answered ? null : TERMINATED_BY_CONDITION,
      });
    });
  }
  const instances: Instance[] = orders.map((o) => {
    const rounds = Array.from({ length: o.findings }, (_, r) => [
      job(INSPECTION.inspectTaskId, `BPMN error DEFECTS_FOUND: ${o.findings - r} findings`, 10 + 2 * r),
      job(INSPECTION.defectsTaskId, null, 11 + 2 * r),
    ]).flat();
    const yes = (answers[o.workOrderId] ?? []).includes(true);
    return {
      id: `pi-${o.workOrderId}`,
      processKey: INSPECTION.processKey,
      processVersion: 'v1',
      businessKey: o.workOrderId,
      status: 'COMPLETED',
      correlatedMessages: [] as string[],
      calledBy: null,
      terminated: null,
      variables: {
        [INSPECTION.findingsVariable]: 0,
        [INSPECTION.outcomeVariable]: 'PASSED',
        [APPROVALS.outputVariable]: answers[o.workOrderId],
        [APPROVALS.decisionVariable]: yes ? 'APPROVED' : 'REJECTED',
      },
      tokens: [ENDED_AT('fork', 't0'), ENDED_AT('join', 't1'), ENDED_AT('join', 't2'), ENDED_AT('end', 't3')],
      jobs: [
        job('handOverWorkOrder', null, 1),
        ...rounds,
        job(INSPECTION.inspectTaskId, null, 50),
        job(APPROVALS.tallyTaskId, null, 60),
        job('createInvoice', null, 70),
      ],
      repairs: [] as Array<{ kind: string; executionId: string | null }>,
    };
  });
  return {
    inbox: [],
    instances: [...instances, ...items],
    invoiceJobs: [],
    invoices: [],
    timers: [],
    escalations: [],
    userTasks: [
      ...orders.map((o) => ({
        id: `task-${o.workOrderId}`,
        processInstanceId: `pi-${o.workOrderId}`,
        activityId: INSPECTION.userTaskId,
        status: 'COMPLETED',
        completionRequestId: approvalRequestId(`task-${o.workOrderId}`),
        completedBy: 'chaos approver',
        cancelReason: null,
      })),
      ...tasks,
    ],
    defects: [
      { workOrderId: 'WO-A', processInstanceId: 'pi-WO-A', findingsLeft: 2 },
      { workOrderId: 'WO-A', processInstanceId: 'pi-WO-A', findingsLeft: 1 },
    ],
    itemBatches: [],
  };
}
const log = (
  workOrderId: string,
  index: number,
  approves: boolean,
  outcome: ApproverAnswer['outcome'],
  sentAt = 0,
  doneAt = sentAt + 100,
): ApproverAnswer => ({
  workOrderId,
  taskId: `task-${itemId(workOrderId, index)}`,
  itemInstanceId: itemId(workOrderId, index),
  approver: orders.find((o) => o.workOrderId === workOrderId)?.approvers[index]?.name ?? '?',
  approves,
  outcome,
  sentAt,
  doneAt,
});
const approved = (): ApproverTally => ({
  ...emptyApproverTally(),
  completed: 2,
  repeatsAnswered: 1,
  secondPersonsRefused: 1,
  answered: 4,
  lateRefused: 1,
  answers: [
    log('WO-A', 0, false, 'COMPLETED', 1_000),
    log('WO-A', 1, true, 'COMPLETED', 2_000),
    // Sent after the yes was taken: refused.
    log('WO-A', 2, true, 'TERMINATED', 3_000),
    log('WO-B', 1, false, 'COMPLETED', 1_000),
    log('WO-B', 0, false, 'COMPLETED', 4_000),
  ],
});
const of = (s: ChaosSnapshot, id: string, change: (i: Instance) => object): ChaosSnapshot => ({
  ...s,
  instances: s.instances.map((i) => (i.id === id ? { ...i, ...change(i) } : i)),
});
const ofA = (s: ChaosSnapshot, change: (i: Instance) => object): ChaosSnapshot => of(s, 'pi-WO-A', change);
const taskOf = (s: ChaosSnapshot, id: string, change: Partial<Task>): ChaosSnapshot => ({
  ...s,
  userTasks: s.userTasks.map((t) => (t.id === id ? { ...t, ...change } : t)),
});

describe('chaos evaluation: the second model', () => {
  test('a perfect run: through the join, round the loop once per finding, one task each, the approvals ended as the condition says', () => {
    expect(evaluateInspections(orders, perfect(), approved())).toEqual({
      orders: 2,
      throughJoin: 2,
      defectsPlanned: 1,
      roundsPlanned: 2,
      rounds: 2,
      defectRecords: 2,
      passedAtEnd: 2,
      userTasksCompleted: 2,
      repeatsAnswered: 1,
      secondPersonsRefused: 1,
      approvalsEnded: 2,
      endedByCondition: 1,
      endedAllAnswered: 1,
      outputsExact: 2,
      lateAnswersRefused: 1,
      talliedOnce: 2,
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
      'a round too few: the loop left after one of two findings (a round lowered them twice)',
      (s) => ({
        ...ofA(s, (i) => ({ jobs: i.jobs.filter((j) => !(j.finishedAt === 12 || j.finishedAt === 13)) })),
        defects: s.defects.filter((d) => d.findingsLeft !== 1),
      }),
      approved(),
      '2 findings: expected 2 rounds, got 1 caught errors',
    ],
    [
      'a round too many: the loop went round again (a round that did not lower the findings)',
      (s) =>
        ofA(s, (i) => ({
          status: 'RUNNING',
          jobs: [...i.jobs, job(INSPECTION.inspectTaskId, 'BPMN error DEFECTS_FOUND: 1 findings', 80)],
          tokens: [...i.tokens, { id: 't9', status: 'WAITING_JOB', activityId: INSPECTION.defectsTaskId }],
        })),
      approved(),
      'went round 3 times',
    ],
    [
      'a round recorded twice under another id',
      (s) => ({
        ...s,
        defects: [...s.defects, { workOrderId: 'WO-A', processInstanceId: 'pi-WO-A', findingsLeft: 2 }],
      }),
      approved(),
      'defect records for 2, 2, 1 findings left, expected 2, 1',
    ],
    [
      'the inspection passed before a round',
      (s) =>
        ofA(s, (i) => ({
          jobs: i.jobs.map((j) =>
            j.activityId === INSPECTION.inspectTaskId && j.lastError === null ? { ...j, finishedAt: 5 } : j,
          ),
        })),
      approved(),
      'expected one passed inspection after the last round, got 1 before a round',
    ],
    [
      'findings left when the inspection passed',
      (s) => ofA(s, (i) => ({ variables: { ...i.variables, [INSPECTION.findingsVariable]: 1 } })),
      approved(),
      'ended with inspectionFindings 1',
    ],
    [
      'a rounds record for the order without findings',
      (s) => ({
        ...s,
        defects: [...s.defects, { workOrderId: 'WO-B', processInstanceId: 'pi-WO-B', findingsLeft: 1 }],
      }),
      approved(),
      'defect records for 1 findings left, expected none',
    ],
    [
      'two user tasks completed for one order',
      (s) => ({ ...s, userTasks: [...s.userTasks, { ...(s.userTasks[0] as Task), id: 'x' }] }),
      approved(),
      '2 user tasks COMPLETED',
    ],
    [
      'a user task completed by another request',
      (s) => taskOf(s, 'task-WO-A', { completionRequestId: 'other' }),
      approved(),
      'completed by request other',
    ],
    [
      'a user task cancelled with no repair that moved its token',
      (s) => ({ ...s, userTasks: [...s.userTasks, { ...(s.userTasks[1] as Task), id: 'y', status: 'CANCELLED' }] }),
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
    [
      'the activity went on after the first yes (a second yes completed)',
      (s) =>
        taskOf(
          of(s, itemId('WO-A', 2), (i) => ({ terminated: null, variables: { ...i.variables, approves: true } })),
          `task-${itemId('WO-A', 2)}`,
          {
            status: 'COMPLETED',
            completionRequestId: answerRequestId(`task-${itemId('WO-A', 2)}`),
            cancelReason: null,
          },
        ),
      approved(),
      'ended with 3 of 3 answers taken, 2 of them yes: not when the condition first held',
    ],
    [
      'the activity ended before the condition held and before its last item',
      (s) =>
        taskOf(
          of(s, itemId('WO-B', 1), (i) => ({
            terminated: TERMINATED_BY_CONDITION,
            variables: { approver: i.variables.approver },
          })),
          `task-${itemId('WO-B', 1)}`,
          { status: 'CANCELLED', completionRequestId: null, cancelReason: TERMINATED_BY_CONDITION },
        ),
      approved(),
      'ended with 1 of 2 answers taken, 0 of them yes',
    ],
    [
      'a terminated item whose task was completed afterwards',
      (s) =>
        taskOf(s, `task-${itemId('WO-A', 2)}`, {
          status: 'COMPLETED',
          completionRequestId: answerRequestId(`task-${itemId('WO-A', 2)}`),
        }),
      approved(),
      'was terminated, and 1 of its tasks COMPLETED',
    ],
    [
      'an item still running after the activity ended',
      (s) =>
        of(s, itemId('WO-A', 2), () => ({
          status: 'RUNNING',
          terminated: null,
          tokens: [{ id: 'x', status: 'WAITING_USER', activityId: 'askApprovers' }],
        })),
      approved(),
      'item 3 (cleo) is RUNNING',
    ],
    [
      'an output collection with an answer of an item that never completed',
      (s) => ofA(s, (i) => ({ variables: { ...i.variables, [APPROVALS.outputVariable]: [false, true, true] } })),
      approved(),
      'output collection [false,true,true], expected [false,true,null]',
    ],
    [
      'an item that answered something else than its approver',
      (s) => of(s, itemId('WO-B', 0), (i) => ({ variables: { ...i.variables, approves: true } })),
      approved(),
      'item 1 (ana) answered true, but ana answers false',
    ],
    [
      'the step after the activity ran twice',
      (s) => ofA(s, (i) => ({ jobs: [...i.jobs, job(APPROVALS.tallyTaskId, null, 65)] })),
      approved(),
      '"Tally the approvals" ran 2 times',
    ],
    [
      'a second batch of items ran to its end without a repair',
      (s) => ({
        ...s,
        instances: [
          ...s.instances,
          ...s.instances
            .filter((i) => i.calledBy?.instanceId === 'pi-WO-B')
            .map((i) => ({
              ...i,
              id: `${i.id}-2`,
              calledBy: { ...(i.calledBy as NonNullable<Instance['calledBy']>), batch: 'batch-2' },
            })),
        ],
      }),
      approved(),
      '2 batches of items ran to their end',
    ],
    [
      'a counting document left behind',
      (s) => ({ ...s, itemBatches: [{ id: `${BATCH}-0`, batch: BATCH }] }),
      approved(),
      'counting document batch-1-0 left behind',
    ],
    [
      'a late answer the approver saw refused, for an item that completed',
      (s) => s,
      { ...approved(), answers: [...approved().answers, log('WO-B', 0, false, 'TERMINATED')], lateRefused: 2 },
      "ana's answer false (TERMINATED): but its item is not terminated",
    ],
    [
      'an answer taken though the approver sent it after seeing a yes taken',
      (s) =>
        taskOf(
          ofA(
            of(s, itemId('WO-A', 2), (i) => ({ terminated: null, variables: { ...i.variables, approves: false } })),
            // Everything else as if it were fine: the output holds the three answers.
            (i) => ({ variables: { ...i.variables, [APPROVALS.outputVariable]: [false, true, false] } }),
          ),
          `task-${itemId('WO-A', 2)}`,
          {
            status: 'COMPLETED',
            completionRequestId: answerRequestId(`task-${itemId('WO-A', 2)}`),
            cancelReason: null,
          },
        ),
      {
        ...approved(),
        answers: [
          ...approved().answers.filter((a) => a.outcome !== 'TERMINATED'),
          { ...log('WO-A', 2, false, 'COMPLETED', 3_000) },
        ],
        lateRefused: 0,
      },
      "cleo's answer false was taken, but sent 900 ms after the approver saw the condition of batch batch-1 hold",
    ],
    [
      'late answers counted, but not logged',
      (s) => s,
      { ...approved(), lateRefused: 3 },
      '3 late answers refused, but 1 logged',
    ],
  ];
  test.each(broken)('%s is caught', (_name, breakIt, tally, violation) => {
    const counts = evaluateInspections(orders, breakIt(perfect()), tally);
    expect(counts.violations.join('\n')).toContain(violation);
  });

  test('a task cancelled because a repair moved its token, and its new task completed, is fine', () => {
    const s = perfect();
    const moved = ofA(s, () => ({ repairs: [{ kind: 'move-token', executionId: 't1' }] }));
    const cancelled = { ...(s.userTasks[0] as Task), id: 'old', status: 'CANCELLED' };
    expect(
      evaluateInspections(orders, { ...moved, userTasks: [...s.userTasks, cancelled] }, approved()).violations,
    ).toEqual([]);
  });

  test('a batch of items ended by a repair that moved the activity token, then a batch that ran to its end, is fine', () => {
    const s = perfect();
    const reason = `a repair moved its token to ${APPROVALS.activityId}`;
    const old = s.instances
      .filter((i) => i.calledBy?.instanceId === 'pi-WO-B')
      .map((i, n) => ({
        ...i,
        id: `${i.id}-old`,
        calledBy: { ...(i.calledBy as NonNullable<Instance['calledBy']>), batch: 'batch-0' },
        terminated: n === 0 ? null : reason,
      }));
    const moved = of({ ...s, instances: [...s.instances, ...old] }, 'pi-WO-B', () => ({
      repairs: [{ kind: 'move-token', executionId: 'tB' }],
    }));
    expect(evaluateInspections(orders, moved, approved()).violations).toEqual([]);
    // Without the repair on record, the first batch's end is a violation.
    expect(
      evaluateInspections(orders, { ...s, instances: [...s.instances, ...old] }, approved()).violations.join('\n'),
    ).toContain('1 batches of items ended by a repair, but 0 move-token repairs on record');
  });
});
