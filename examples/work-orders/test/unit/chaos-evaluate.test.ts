import { evaluateChaos } from '../../chaos/evaluate';
import { chaosLine, chaosPassed } from '../../chaos/report';
import type { ChaosSnapshot } from '../../chaos/snapshot';
import { DEFAULT_SIZES, planChaos, RACE, type ChaosPlan } from '../../chaos/plan';

// The first model only: the second one's orders are chaos-inspection.test.ts's.
const plan: ChaosPlan = planChaos({ ...DEFAULT_SIZES, orders: 3, messages: 100, seed: 5, inspections: 0 });
const poisonIds = plan.messages.filter((m) => m.kind === 'poison').map((_, i) => `poison-${i}`);

/**
 * The snapshot a perfect run leaves: every completion DONE in its order's
 * trail, copies parked or absorbed, one invoice each; but the races in
 * `timerWins` (work order ids), which the timer won: their last tranche OPEN
 * and in no trail, recorded overdue once, the timer FIRED, no invoice.
 */
function perfect(
  timerWins: ReadonlySet<string> = new Set(),
  p: ChaosPlan = plan,
  poison: readonly string[] = poisonIds,
): ChaosSnapshot {
  const loser = new Set(p.races.filter((r) => timerWins.has(r.workOrderId)).map((r) => r.message));
  const instances = p.orders.map((o, i) => ({
    id: `pi-${i}`,
    processKey: 'work-order-execution',
    processVersion: 'v1',
    businessKey: o.workOrderId,
    status: 'COMPLETED',
    correlatedMessages: p.messages.flatMap((m, n) =>
      m.kind === 'completion' && m.workOrderId === o.workOrderId && !loser.has(n) ? [m.docId] : [],
    ),
    calledBy: null,
    terminated: null,
    variables: {},
    tokens: [{ id: `e-${i}`, status: 'ENDED', activityId: 'end' }],
    jobs: [] as Array<{ activityId: string; status: string; lastError: string | null; finishedAt: number | null }>,
    repairs: [] as Array<{ kind: string; executionId: string | null }>,
  }));
  const instanceOf = (workOrderId: string): string => instances.find((i) => i.businessKey === workOrderId)?.id ?? '';
  const billed = instances.filter((i) => !timerWins.has(i.businessKey));
  const inbox = [
    ...p.messages.flatMap((m, n) =>
      m.kind === 'completion'
        ? [
            loser.has(n)
              ? {
                  id: m.docId,
                  status: 'OPEN',
                  reason: null,
                  processInstanceId: null,
                  deadLettered: false,
                  requeued: false,
                }
              : {
                  id: m.docId,
                  status: 'DONE',
                  reason: null,
                  processInstanceId: instanceOf(m.workOrderId),
                  deadLettered: false,
                  requeued: false,
                },
          ]
        : [],
    ),
    ...p.messages.flatMap((m) =>
      m.kind === 'collision'
        ? [
            {
              id: m.collisionIds[0],
              status: 'PARKED',
              reason: 'KEY_COLLISION',
              processInstanceId: null,
              deadLettered: false,
              requeued: false,
            },
          ]
        : [],
    ),
    ...poison.map((id) => ({
      id,
      status: 'PARKED',
      reason: 'INVALID_PAYLOAD',
      processInstanceId: null,
      deadLettered: false,
      requeued: false,
    })),
  ];
  const overdue = instances.filter((i) => timerWins.has(i.businessKey));
  return {
    inbox,
    instances,
    invoiceJobs: billed.map((i) => ({ processInstanceId: i.id })),
    invoices: billed.map((i) => ({ workOrderId: i.businessKey, processInstanceId: i.id })),
    timers: overdue.map((i) => ({ processInstanceId: i.id, activityId: RACE.boundaryEventId, status: 'FIRED' })),
    escalations: overdue.map((i) => ({ workOrderId: i.businessKey, processInstanceId: i.id })),
    userTasks: [],
    defects: [],
    itemBatches: [],
  };
}

const firstCompletion = plan.messages.find((m) => m.kind === 'completion');
const completionId = firstCompletion?.kind === 'completion' ? firstCompletion.docId : '';

describe('chaos evaluation', () => {
  test('a perfect run: nothing lost or doubled, every order invoiced, the line says so', () => {
    const counts = evaluateChaos(plan, poisonIds, perfect());
    expect(counts.violations).toEqual([]);
    expect(chaosPassed(counts)).toBe(true);
    expect(counts).toMatchObject({
      messages: 100,
      done: 12,
      lost: 0,
      doubleCorrelations: 0,
      doubleInvoices: 0,
      ordersInvoiced: 3,
      races: 1,
      racesWonByCompletion: 1,
      parkedByReason: { KEY_COLLISION: 1, INVALID_PAYLOAD: 1 },
    });
    expect(chaosLine(5, counts, 9)).toBe(
      'chaos seed 5: messages 100, DONE 12, PARKED INVALID_PAYLOAD 1, KEY_COLLISION 1, dead-lettered 0 (requeued 0), lost 0, double correlations 0, double invoices 0, races 1 (timer won 0, completion won 1, both paths 0), inspected work orders 0 (through the join 0, error loops 0 of 0 rounds on 0 orders with findings, defect records 0, passed at the end 0, user tasks completed 0, repeats answered already completed 0, second persons refused 0, approvals ended 0 (condition 0, all answered 0), outputs exact 0, late answers refused 0, tallied once 0, stuck 0), work orders invoiced 3 + overdue 0 + cancelled 0 of 3 (9 s)',
    );
    const op = {
      cancelled: 1,
      moved: 4,
      requeued: 0,
      refusedAtPreview: 2,
      refusedAtConfirm: 1,
      failed: 0,
      nothingToDo: 1,
      abandoned: 2,
    };
    expect(chaosLine(5, counts, 9, op)).toContain(
      'both paths 0), operator repairs: cancelled 1, moved 4, requeued 0, refused 2 by the dry run and 1 at the confirmation, failed 0, not confirmed 2, nothing to do 1, inspected work orders 0',
    );
  });

  const broken: Array<
    [
      string,
      (s: ChaosSnapshot) => ChaosSnapshot,
      Partial<{ lost: number; doubleCorrelations: number; doubleInvoices: number }>,
      string,
    ]
  > = [
    [
      'a completion without document',
      (s) => ({ ...s, inbox: s.inbox.filter((d) => d.id !== completionId) }),
      { lost: 1 },
      'no inbox document',
    ],
    [
      'a completion left OPEN',
      (s) => ({ ...s, inbox: s.inbox.map((d) => (d.id === completionId ? { ...d, status: 'OPEN' } : d)) }),
      { lost: 1 },
      'still OPEN',
    ],
    [
      'DONE but not in any trail (acked, never correlated)',
      (s) => ({
        ...s,
        instances: s.instances.map((i) => ({
          ...i,
          correlatedMessages: i.correlatedMessages.filter((id) => id !== completionId),
        })),
      }),
      { lost: 1 },
      'not in the audit trail',
    ],
    [
      'a message in two trails',
      (s) => ({
        ...s,
        instances: s.instances.map((i, n) =>
          n === 1 ? { ...i, correlatedMessages: [...i.correlatedMessages, completionId] } : i,
        ),
      }),
      { doubleCorrelations: 1 },
      'double correlation',
    ],
    [
      'two invoice jobs for one order',
      (s) => ({ ...s, invoiceJobs: [...s.invoiceJobs, { processInstanceId: 'pi-0' }] }),
      { doubleInvoices: 1 },
      'double invoice',
    ],
    [
      'a poison message DONE',
      (s) => ({
        ...s,
        inbox: s.inbox.map((d) => (d.id === poisonIds[0] ? { ...d, status: 'DONE', reason: null } : d)),
      }),
      { lost: 1 },
      'poison',
    ],
    [
      'both payloads of a collision parked as collisions',
      (s) => {
        const c = plan.messages.find((m) => m.kind === 'collision');
        const second = c?.kind === 'collision' ? c.collisionIds[1] : '';
        return {
          ...s,
          inbox: [
            ...s.inbox,
            {
              id: second,
              status: 'PARKED',
              reason: 'KEY_COLLISION',
              processInstanceId: null,
              deadLettered: false,
              requeued: false,
            },
          ],
        };
      },
      { lost: 1 },
      '2 collision documents',
    ],
    [
      'a document nobody published',
      (s) => ({
        ...s,
        inbox: [
          ...s.inbox,
          { id: 'stray', status: 'DONE', reason: null, processInstanceId: null, deadLettered: false, requeued: false },
        ],
      }),
      {},
      'unexpected document',
    ],
    [
      'an order not completed',
      (s) => ({ ...s, instances: s.instances.map((i, n) => (n === 2 ? { ...i, status: 'RUNNING' } : i)) }),
      {},
      'not completed and invoiced',
    ],
    [
      'an instance left in INCIDENT (a stale job dragged its token back)',
      (s) => ({ ...s, instances: s.instances.map((i, n) => (n === 1 ? { ...i, status: 'INCIDENT' } : i)) }),
      {},
      'left in INCIDENT',
    ],
  ];
  test.each(broken)('%s is caught', (_name, breakIt, counts, violation) => {
    const result = evaluateChaos(plan, poisonIds, breakIt(perfect()));
    expect(chaosPassed(result)).toBe(false);
    expect(result).toMatchObject(counts);
    expect(result.violations.join('\n')).toContain(violation);
  });
});

/**
 * An operator cancelled the token of the first order on purpose after its
 * first tranche (the record on the instance): its later tranches wait for
 * nobody, OPEN in the buffer or parked after the window; it ends COMPLETED
 * without an invoice.
 */
describe("chaos evaluation of the operator's repairs", () => {
  const order = plan.orders[0]?.workOrderId ?? '';
  const tranches = plan.messages.flatMap((m) => (m.kind === 'completion' && m.workOrderId === order ? [m.docId] : []));
  const [first, ...later] = tranches;
  const cancelledRun = (): ChaosSnapshot => {
    const s = perfect();
    const id = instanceOfOrderIn(s, order);
    return {
      ...s,
      instances: s.instances.map((i) =>
        i.id === id
          ? {
              ...i,
              correlatedMessages: [first ?? ''],
              tokens: [{ id: 'e-cancelled', status: 'CANCELLED', activityId: 'waitForTranche2' }],
              repairs: [
                { kind: 'move-token', executionId: 'e-cancelled' },
                { kind: 'cancel-token', executionId: 'e-cancelled' },
              ],
            }
          : i,
      ),
      inbox: s.inbox.map((d, n) =>
        later.includes(d.id)
          ? {
              ...d,
              status: n % 2 === 0 ? 'OPEN' : 'PARKED',
              reason: n % 2 === 0 ? null : 'NO_WAITING_INSTANCE',
              processInstanceId: null,
            }
          : d,
      ),
      invoiceJobs: s.invoiceJobs.filter((j) => j.processInstanceId !== id),
      invoices: s.invoices.filter((v) => v.workOrderId !== order),
    };
  };

  test('an order cancelled on purpose: COMPLETED without an invoice, its later tranches held in the inbox, nothing lost', () => {
    expect(later.length).toBe(3);
    const counts = evaluateChaos(plan, poisonIds, cancelledRun());
    expect(counts.violations).toEqual([]);
    expect(counts).toMatchObject({ lost: 0, ordersInvoiced: 2, ordersCancelled: 1 });
  });

  const broken: Array<[string, (s: ChaosSnapshot) => ChaosSnapshot, string]> = [
    [
      'the cancelled token revived (a late job moved it)',
      (s) => ({
        ...s,
        instances: s.instances.map((i) =>
          i.businessKey === order
            ? {
                ...i,
                status: 'RUNNING',
                tokens: [{ id: 'e-cancelled', status: 'WAITING_JOB', activityId: 'handOverWorkOrder' }],
              }
            : i,
        ),
      }),
      'revived',
    ],
    [
      'without the record, an order without its invoice is a failure',
      (s) => ({ ...s, instances: s.instances.map((i) => (i.businessKey === order ? { ...i, repairs: [] } : i)) }),
      'not completed and invoiced',
    ],
    [
      'a later tranche of a cancelled order parked for another reason',
      (s) => ({
        ...s,
        inbox: s.inbox.map((d) =>
          d.id === later[0] ? { ...d, status: 'PARKED', reason: 'AMBIGUOUS_CORRELATION' } : d,
        ),
      }),
      'after its order was cancelled: PARKED AMBIGUOUS_CORRELATION',
    ],
    [
      'a cancelled order still RUNNING',
      (s) => ({ ...s, instances: s.instances.map((i) => (i.businessKey === order ? { ...i, status: 'RUNNING' } : i)) }),
      'is not COMPLETED',
    ],
  ];
  test.each(broken)('%s is caught', (_name, breakIt, violation) => {
    const result = evaluateChaos(plan, poisonIds, breakIt(cancelledRun()));
    expect(chaosPassed(result)).toBe(false);
    expect(result.violations.join('\n')).toContain(violation);
  });
});

const instanceOfOrderIn = (s: ChaosSnapshot, workOrderId: string): string =>
  s.instances.find((i) => i.businessKey === workOrderId)?.id ?? '';

/** Three races (seed 5, 8 orders): the timer wins the first two, the completion the third. */
const racePlan: ChaosPlan = planChaos({ ...DEFAULT_SIZES, orders: 8, messages: 100, seed: 5, inspections: 0 });
const racePoison = racePlan.messages.filter((m) => m.kind === 'poison').map((_, i) => `poison-${i}`);
const [wonA, wonB, lostC] = racePlan.races;
const timerWins = new Set([wonA?.workOrderId ?? '', wonB?.workOrderId ?? '']);
const raced = (): ChaosSnapshot => perfect(timerWins, racePlan, racePoison);
const loserId = ((): string => {
  const m = racePlan.messages[wonA?.message ?? -1];
  return m?.kind === 'completion' ? m.docId : '';
})();
const instanceOfOrder = (s: ChaosSnapshot, workOrderId: string): string =>
  s.instances.find((i) => i.businessKey === workOrderId)?.id ?? '';

describe('chaos evaluation of races (a last tranche against its interrupting timer)', () => {
  test('races the timer won and one the completion won: exactly one path each, the losers correlated nowhere', () => {
    expect(racePlan.races).toHaveLength(3);
    const counts = evaluateChaos(racePlan, racePoison, raced());
    expect(counts.violations).toEqual([]);
    expect(counts).toMatchObject({
      races: 3,
      racesWonByTimer: 2,
      racesWonByCompletion: 1,
      bothPaths: 0,
      ordersInvoiced: 6,
      ordersOverdue: 2,
      lost: 0,
      doubleInvoices: 0,
    });
    expect(chaosLine(5, counts, 1)).toContain('races 3 (timer won 2, completion won 1, both paths 0), inspected');
    expect(chaosLine(5, counts, 1)).toContain('work orders invoiced 6 + overdue 2 + cancelled 0 of 8');
  });

  test('a losing tranche parked NO_WAITING_INSTANCE (the buffer window passed) is accepted too', () => {
    const s = raced();
    const counts = evaluateChaos(racePlan, racePoison, {
      ...s,
      inbox: s.inbox.map((d) => (d.id === loserId ? { ...d, status: 'PARKED', reason: 'NO_WAITING_INSTANCE' } : d)),
    });
    expect(counts.violations).toEqual([]);
  });

  const broken: Array<
    [
      string,
      (s: ChaosSnapshot) => ChaosSnapshot,
      Partial<{ bothPaths: number; lost: number; doubleInvoices: number }>,
      string,
    ]
  > = [
    [
      'both paths: recorded overdue and invoiced',
      (s) => {
        const id = instanceOfOrder(s, wonA?.workOrderId ?? '');
        return {
          ...s,
          invoiceJobs: [...s.invoiceJobs, { processInstanceId: id }],
          invoices: [...s.invoices, { workOrderId: wonA?.workOrderId ?? '', processInstanceId: id }],
        };
      },
      { bothPaths: 1 },
      'took both paths',
    ],
    [
      'neither path: still waiting at the end',
      (s) => ({
        ...s,
        instances: s.instances.map((i) => (i.businessKey === lostC?.workOrderId ? { ...i, status: 'RUNNING' } : i)),
        invoices: s.invoices.filter((v) => v.workOrderId !== lostC?.workOrderId),
        invoiceJobs: s.invoiceJobs.filter((j) => j.processInstanceId !== instanceOfOrder(s, lostC?.workOrderId ?? '')),
      }),
      {},
      'not completed and invoiced',
    ],
    [
      'the losing tranche DONE (acked as if correlated)',
      (s) => ({
        ...s,
        inbox: s.inbox.map((d) =>
          d.id === loserId
            ? { ...d, status: 'DONE', processInstanceId: instanceOfOrder(s, wonA?.workOrderId ?? '') }
            : d,
        ),
      }),
      { lost: 1 },
      'lost its race: DONE',
    ],
    [
      'the losing tranche parked for another reason',
      (s) => ({
        ...s,
        inbox: s.inbox.map((d) => (d.id === loserId ? { ...d, status: 'PARKED', reason: 'AMBIGUOUS_CORRELATION' } : d)),
      }),
      { lost: 1 },
      'PARKED AMBIGUOUS_CORRELATION',
    ],
    [
      'the losing tranche in the trail anyway',
      (s) => ({
        ...s,
        instances: s.instances.map((i) =>
          i.businessKey === wonA?.workOrderId ? { ...i, correlatedMessages: [...i.correlatedMessages, loserId] } : i,
        ),
      }),
      {},
      'lost its race was correlated',
    ],
    [
      'the losing tranche never stored',
      (s) => ({ ...s, inbox: s.inbox.filter((d) => d.id !== loserId) }),
      { lost: 1 },
      'no inbox document',
    ],
    [
      'won by the timer, but no timer FIRED',
      (s) => ({
        ...s,
        timers: s.timers.filter((t) => t.processInstanceId !== instanceOfOrder(s, wonA?.workOrderId ?? '')),
      }),
      {},
      'expected one FIRED',
    ],
    [
      'recorded overdue twice',
      (s) => ({
        ...s,
        escalations: [
          ...s.escalations,
          { workOrderId: wonA?.workOrderId ?? '', processInstanceId: instanceOfOrder(s, wonA?.workOrderId ?? '') },
        ],
      }),
      {},
      'recorded overdue 2 times',
    ],
    [
      'won by the completion, but its timer still PENDING',
      (s) => ({
        ...s,
        timers: [
          ...s.timers,
          {
            processInstanceId: instanceOfOrder(s, lostC?.workOrderId ?? ''),
            activityId: RACE.boundaryEventId,
            status: 'PENDING',
          },
        ],
      }),
      {},
      'its timer is still there (PENDING)',
    ],
    [
      'an order that races nothing recorded overdue',
      (s) => {
        const calm =
          racePlan.orders.find((o) => !racePlan.races.some((r) => r.workOrderId === o.workOrderId))?.workOrderId ?? '';
        return {
          ...s,
          escalations: [...s.escalations, { workOrderId: calm, processInstanceId: instanceOfOrder(s, calm) }],
        };
      },
      {},
      'its timer was 14 days away',
    ],
  ];
  test.each(broken)('%s is caught', (_name, breakIt, counts, violation) => {
    const result = evaluateChaos(racePlan, racePoison, breakIt(raced()));
    expect(chaosPassed(result)).toBe(false);
    expect(result).toMatchObject(counts);
    expect(result.violations.join('\n')).toContain(violation);
  });
});
