import { evaluate, observeOrder, showsOf, type InboxView, type Published, type Snapshot } from '../../tools/demo/evaluate';
import { MIN_ORDERS, planOrders, SCENARIOS } from '../../tools/demo/plan';

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? E[] : T[K] };
const empty: Snapshot = { inbox: [], instances: [], invoices: [], invoiceJobs: [], waitingTokens: [], timers: [], escalations: [], reminders: {}, waitingListed: null };

describe('planOrders', () => {
  test.each([MIN_ORDERS, 40, 200, 1_000])('%i orders: every scenario has at least one, shares as planned, ids unique', (orders) => {
    const plan = planOrders('r1', orders);
    expect(plan).toHaveLength(orders);
    expect(new Set(plan.map((o) => o.workOrderId)).size).toBe(orders);
    for (const s of SCENARIOS) {
      const count = plan.filter((o) => o.scenario === s.id).length;
      expect(count).toBeGreaterThanOrEqual(1);
      if (s.id !== 'normal') expect(count).toBe(s.count ?? Math.min(s.maxCount ?? Infinity, Math.max(1, Math.round(orders * s.share))));
      if (s.maxCount !== undefined) expect(count).toBeLessThanOrEqual(s.maxCount);
    }
    expect(plan.every((o) => o.workOrderId.startsWith('WO-r1-'))).toBe(true);
  });

  test('the provider never answers three work orders, whatever the size, and they start with a deadline of seconds', () => {
    for (const orders of [MIN_ORDERS, 200, 5_000]) expect(planOrders('r', orders).filter((o) => o.scenario === 'neverAnswered')).toHaveLength(3);
    const never = SCENARIOS.find((s) => s.id === 'neverAnswered');
    expect(never?.variables).toEqual({ completionDeadline: 'PT5S' });
    // Every other scenario keeps the model's 14 days.
    expect(SCENARIOS.filter((s) => s.variables !== undefined).map((s) => s.id)).toEqual(['neverAnswered']);
  });

  test.each([0, MIN_ORDERS - 1, 10.5, -1])('%p orders is refused', (orders) => {
    expect(() => planOrders('r', orders)).toThrow(`at least ${MIN_ORDERS}`);
  });
});

const doc = (id: string, key: string | null, status: string, reason: string | null = null, extra: Partial<InboxView> = {}): InboxView => ({ id, correlationKey: key, status, reason, correlatedVia: 'RELAY', deadLettered: false, ...extra });

/** A run of MIN_ORDERS orders where every order ended as its scenario expects. */
function healthyRun(): { plan: ReturnType<typeof planOrders>; published: Published; snapshot: Mutable<Snapshot> } {
  const plan = planOrders('t', MIN_ORDERS);
  const inbox: InboxView[] = [];
  const instances: Array<{ id: string; businessKey: string; status: string }> = [];
  const invoices: Array<{ workOrderId: string; processInstanceId: string }> = [];
  const invoiceJobs: Array<{ processInstanceId: string }> = [];
  const waitingTokens: Array<{ processInstanceId: string; activityId: string }> = [];
  const timers: Array<{ processInstanceId: string; activityId: string; status: string }> = [];
  const escalations: Array<{ workOrderId: string; processInstanceId: string }> = [];
  const reminders: Record<string, number> = {};
  const waitingListed: Array<{ businessKey: string; activityId: string; waitingSeconds: number }> = [];
  const completionIds = new Map<string, string>();
  for (const o of plan) {
    const id = `c-${o.workOrderId}`;
    const instanceId = `i-${o.workOrderId}`;
    if (o.scenario === 'neverAnswered') {
      instances.push({ id: instanceId, businessKey: o.workOrderId, status: 'RUNNING' });
      waitingTokens.push({ processInstanceId: instanceId, activityId: 'waitForCompletion' });
      timers.push({ processInstanceId: instanceId, activityId: 'completionOverdue', status: 'FIRED' });
      escalations.push({ workOrderId: o.workOrderId, processInstanceId: instanceId });
      reminders[o.workOrderId] = 1;
      waitingListed.push({ businessKey: o.workOrderId, activityId: 'waitForCompletion', waitingSeconds: 9 });
      continue;
    }
    completionIds.set(o.workOrderId, id);
    if (o.scenario === 'ambiguous') {
      inbox.push(doc(id, o.workOrderId, 'PARKED', 'AMBIGUOUS_CORRELATION'));
      instances.push({ id: instanceId, businessKey: o.workOrderId, status: 'INCIDENT' });
      continue;
    }
    inbox.push(doc(id, o.workOrderId, 'DONE', null, { correlatedVia: o.scenario === 'overtake' ? 'BUFFER' : 'RELAY', deadLettered: o.scenario === 'deadLetter' }));
    if (o.scenario === 'conflict') inbox.push(doc(`k-${o.workOrderId}`, o.workOrderId, 'PARKED', 'KEY_COLLISION'));
    instances.push({ id: instanceId, businessKey: o.workOrderId, status: 'COMPLETED' });
    invoices.push({ workOrderId: o.workOrderId, processInstanceId: instanceId });
    invoiceJobs.push({ processInstanceId: instanceId });
  }
  inbox.push(doc('p-1', null, 'PARKED', 'INVALID_PAYLOAD'));
  return { plan, published: { completionIds, poisonIds: ['p-1'] }, snapshot: { inbox, instances, invoices, invoiceJobs, waitingTokens, timers, escalations, reminders, waitingListed } };
}

describe('evaluate', () => {
  test('a healthy run: every scenario as expected, no invariant violated, totals by status and reason', () => {
    const { plan, published, snapshot } = healthyRun();
    const e = evaluate(plan, published, snapshot);
    expect(e.scenarios.filter((s) => !s.ok)).toEqual([]);
    expect(e.invariants.map((i) => i.violations)).toEqual([[], [], [], [], [], []]);
    expect(e.scenarios.find((s) => s.scenario === 'neverAnswered')).toMatchObject({ count: 3, ok: true, observed: [{ outcome: 'no inbox document · RUNNING at waitForCompletion · escalated once, 1 reminder · in inbox waiting past its deadline · not invoiced', count: 3 }] });
    expect(e.ok).toBe(true);
    expect(e.totals).toEqual([
      { status: 'DONE', reason: null, count: 9 },
      { status: 'PARKED', reason: 'AMBIGUOUS_CORRELATION', count: 1 },
      { status: 'PARKED', reason: 'INVALID_PAYLOAD', count: 1 },
      { status: 'PARKED', reason: 'KEY_COLLISION', count: 1 },
    ]);
  });

  // Each row breaks the healthy run in one way and names what must catch it.
  test.each<[string, (r: ReturnType<typeof healthyRun>) => void, { scenario?: string; invariant?: string }]>([
    ['a completion never stored', (r) => void r.snapshot.inbox.splice(0, 1), { scenario: 'duplicate', invariant: 'every published message' }],
    ['a completion left OPEN', (r) => void (r.snapshot.inbox[0] = { ...(r.snapshot.inbox[0] as InboxView), status: 'OPEN' }), { invariant: 'every published message' }],
    ['a PARKED document without a reason', (r) => void (r.snapshot.inbox[0] = { ...(r.snapshot.inbox[0] as InboxView), status: 'PARKED', reason: null }), { invariant: 'every published message' }],
    ['a poison message lost', (r) => void r.snapshot.inbox.pop(), { scenario: 'poison', invariant: 'every published message' }],
    ['a second instance billed the same work order', (r) => {
      const first = r.plan.find((o) => o.scenario === 'normal')?.workOrderId ?? '';
      (r.snapshot.instances as Array<{ id: string; businessKey: string; status: string }>).push({ id: 'i-second', businessKey: first, status: 'COMPLETED' });
      (r.snapshot.invoiceJobs as Array<{ processInstanceId: string }>).push({ processInstanceId: 'i-second' });
    }, { scenario: 'normal', invariant: 'invoiced twice' }],
    ['a completed work order without invoice', (r) => void (r.snapshot.invoices as unknown[]).splice(0, 1), { invariant: 'without its invoice' }],
    ['the overtaking completion correlated by the relay, not the buffer', (r) => {
      const i = r.snapshot.inbox.findIndex((d) => d.correlatedVia === 'BUFFER');
      r.snapshot.inbox[i] = { ...(r.snapshot.inbox[i] as InboxView), correlatedVia: 'RELAY' };
    }, { scenario: 'overtake' }],
    // The provider never answers: each way the promise could break.
    ...neverBroken(),
  ])('%s is reported', (_, breakIt, expected) => {
    const run = healthyRun();
    breakIt(run);
    const e = evaluate(run.plan, run.published, run.snapshot);
    expect(e.ok).toBe(false);
    if (expected.scenario !== undefined) expect(e.scenarios.find((s) => s.scenario === expected.scenario)?.ok).toBe(false);
    if (expected.invariant !== undefined) expect(e.invariants.find((i) => i.name.includes(expected.invariant ?? ''))?.violations.length).toBeGreaterThan(0);
  });

  test('observeOrder: a work order with no trace at all says so', () => {
    expect(observeOrder(empty, 'WO-none')).toBe('no inbox document · no process · not invoiced');
    expect(observeOrder(empty, 'WO-none', showsOf('neverAnswered'))).toBe('no inbox document · no process · escalated never, 0 reminders · not invoiced');
  });

  test('the path shows only where the scenario is about it', () => {
    const snapshot: Snapshot = { ...empty, inbox: [doc('a', 'WO-1', 'DONE', null, { correlatedVia: 'BUFFER' })], instances: [{ id: 'i', businessKey: 'WO-1', status: 'COMPLETED' }], invoices: [{ workOrderId: 'WO-1', processInstanceId: 'i' }] };
    expect(observeOrder(snapshot, 'WO-1')).toBe('DONE · COMPLETED · invoiced');
    expect(observeOrder(snapshot, 'WO-1', { path: true })).toBe('DONE via buffer · COMPLETED · invoiced');
  });

  test('an escalation shows on any work order; `inbox waiting` only once the run asked it, and it must say past the deadline', () => {
    const base: Snapshot = { ...empty, instances: [{ id: 'i', businessKey: 'WO-1', status: 'RUNNING' }], waitingTokens: [{ processInstanceId: 'i', activityId: 'waitForCompletion' }], escalations: [{ workOrderId: 'WO-1', processInstanceId: 'i' }], reminders: { 'WO-1': 2 } };
    expect(observeOrder(base, 'WO-1')).toBe('no inbox document · RUNNING · escalated once, 2 reminders · not invoiced');
    const never = showsOf('neverAnswered');
    expect(never.waiting).toEqual({ deadlineSeconds: 5 });
    expect(observeOrder(base, 'WO-1', never)).toBe('no inbox document · RUNNING at waitForCompletion · escalated once, 2 reminders · not invoiced');
    const listed = (waitingSeconds: number): Snapshot => ({ ...base, waitingListed: [{ businessKey: 'WO-1', activityId: 'waitForCompletion', waitingSeconds }] });
    expect(observeOrder(listed(5), 'WO-1', never)).toContain('· in inbox waiting past its deadline ·');
    expect(observeOrder(listed(4), 'WO-1', never)).toContain('· in inbox waiting only 4 s ·');
    expect(observeOrder({ ...base, waitingListed: [] }, 'WO-1', never)).toContain('· not in inbox waiting ·');
  });
});

type Breaker = [string, (r: ReturnType<typeof healthyRun>) => void, { scenario?: string; invariant?: string }];

/** Ways the never-answered scenario can go wrong, each with what must notice. */
function neverBroken(): Breaker[] {
  const never = (r: ReturnType<typeof healthyRun>): string => r.plan.find((o) => o.scenario === 'neverAnswered')?.workOrderId ?? '';
  const normal = (r: ReturnType<typeof healthyRun>): string => r.plan.find((o) => o.scenario === 'normal')?.workOrderId ?? '';
  return [
    ['a never-answered order not escalated', (r) => void (r.snapshot.escalations = r.snapshot.escalations.filter((e) => e.workOrderId !== never(r))), { scenario: 'neverAnswered', invariant: 'waits silently' }],
    ['a never-answered order escalated twice', (r) => void r.snapshot.escalations.push({ workOrderId: never(r), processInstanceId: `i-${never(r)}` }), { scenario: 'neverAnswered', invariant: 'escalated twice' }],
    ['the provider saw no reminder', (r) => void (r.snapshot.reminders = {}), { scenario: 'neverAnswered' }],
    ['the provider saw two reminders', (r) => void (r.snapshot.reminders = { ...r.snapshot.reminders, [never(r)]: 2 }), { scenario: 'neverAnswered' }],
    ['the escalated token no longer waits', (r) => void (r.snapshot.waitingTokens = r.snapshot.waitingTokens.filter((t) => t.processInstanceId !== `i-${never(r)}`)), { scenario: 'neverAnswered', invariant: 'waits silently' }],
    ['the token waits elsewhere', (r) => void (r.snapshot.waitingTokens = r.snapshot.waitingTokens.map((t) => (t.processInstanceId === `i-${never(r)}` ? { ...t, activityId: 'somewhere' } : t))), { scenario: 'neverAnswered' }],
    ['the instance ended (an interrupting timer)', (r) => void (r.snapshot.instances = r.snapshot.instances.map((i) => (i.businessKey === never(r) ? { ...i, status: 'COMPLETED' } : i))), { scenario: 'neverAnswered' }],
    ['a never-answered order invoiced (the provider answered a reminder)', (r) => {
      r.snapshot.inbox.push(doc(`c-${never(r)}`, never(r), 'DONE'));
      r.snapshot.invoices.push({ workOrderId: never(r), processInstanceId: `i-${never(r)}` });
    }, { scenario: 'neverAnswered' }],
    ['inbox waiting did not list one', (r) => void (r.snapshot.waitingListed = (r.snapshot.waitingListed ?? []).filter((w) => w.businessKey !== never(r))), { scenario: 'neverAnswered' }],
    ['a normal order escalated', (r) => void r.snapshot.escalations.push({ workOrderId: normal(r), processInstanceId: `i-${normal(r)}` }), { scenario: 'normal', invariant: 'before its deadline' }],
    ['a timer left PENDING for an invoiced order', (r) => void r.snapshot.timers.push({ processInstanceId: `i-${normal(r)}`, activityId: 'completionOverdue', status: 'PENDING' }), { invariant: 'PENDING timer' }],
    ['an order neither invoiced nor escalated nor in incident', (r) => {
      r.snapshot.invoices = r.snapshot.invoices.filter((v) => v.workOrderId !== normal(r));
      r.snapshot.instances = r.snapshot.instances.map((i) => (i.businessKey === normal(r) ? { ...i, status: 'RUNNING' } : i));
    }, { invariant: 'waits silently' }],
  ];
}
