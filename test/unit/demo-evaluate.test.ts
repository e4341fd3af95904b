import { evaluate, observeOrder, type InboxView, type Published, type Snapshot } from '../../tools/demo/evaluate';
import { MIN_ORDERS, planOrders, SCENARIOS } from '../../tools/demo/plan';

describe('planOrders', () => {
  test.each([10, 40, 200, 1_000])('%i orders: every scenario has at least one, shares as planned, ids unique', (orders) => {
    const plan = planOrders('r1', orders);
    expect(plan).toHaveLength(orders);
    expect(new Set(plan.map((o) => o.workOrderId)).size).toBe(orders);
    for (const s of SCENARIOS) {
      const count = plan.filter((o) => o.scenario === s.id).length;
      expect(count).toBeGreaterThanOrEqual(1);
      if (s.id !== 'normal') expect(count).toBe(Math.min(s.maxCount ?? Infinity, Math.max(1, Math.round(orders * s.share))));
      if (s.maxCount !== undefined) expect(count).toBeLessThanOrEqual(s.maxCount);
    }
    expect(plan.every((o) => o.workOrderId.startsWith('WO-r1-'))).toBe(true);
  });

  test.each([0, 9, 10.5, -1])('%p orders is refused', (orders) => {
    expect(() => planOrders('r', orders)).toThrow(`at least ${MIN_ORDERS}`);
  });
});

const doc = (id: string, key: string | null, status: string, reason: string | null = null, extra: Partial<InboxView> = {}): InboxView => ({ id, correlationKey: key, status, reason, correlatedVia: 'RELAY', deadLettered: false, ...extra });

/** A run of 10 orders where every order ended as its scenario expects. */
function healthyRun(): { plan: ReturnType<typeof planOrders>; published: Published; snapshot: Snapshot } {
  const plan = planOrders('t', 10);
  const inbox: InboxView[] = [];
  const instances: Array<{ id: string; businessKey: string; status: string }> = [];
  const invoices: Array<{ workOrderId: string; processInstanceId: string }> = [];
  const invoiceJobs: Array<{ processInstanceId: string }> = [];
  const completionIds = new Map<string, string>();
  for (const o of plan) {
    const id = `c-${o.workOrderId}`;
    completionIds.set(o.workOrderId, id);
    const instanceId = `i-${o.workOrderId}`;
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
  return { plan, published: { completionIds, poisonIds: ['p-1'] }, snapshot: { inbox, instances, invoices, invoiceJobs } };
}

describe('evaluate', () => {
  test('a healthy run: every scenario as expected, no invariant violated, totals by status and reason', () => {
    const { plan, published, snapshot } = healthyRun();
    const e = evaluate(plan, published, snapshot);
    expect(e.scenarios.filter((s) => !s.ok)).toEqual([]);
    expect(e.invariants.map((i) => i.violations)).toEqual([[], [], []]);
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
    ['a completion never stored', (r) => void (r.snapshot.inbox as InboxView[]).splice(0, 1), { scenario: 'duplicate', invariant: 'every published message' }],
    ['a completion left OPEN', (r) => void ((r.snapshot.inbox as InboxView[])[0] = { ...(r.snapshot.inbox[0] as InboxView), status: 'OPEN' }), { invariant: 'every published message' }],
    ['a PARKED document without a reason', (r) => void ((r.snapshot.inbox as InboxView[])[0] = { ...(r.snapshot.inbox[0] as InboxView), status: 'PARKED', reason: null }), { invariant: 'every published message' }],
    ['a poison message lost', (r) => void (r.snapshot.inbox as InboxView[]).pop(), { scenario: 'poison', invariant: 'every published message' }],
    ['a second instance billed the same work order', (r) => {
      const first = r.plan.find((o) => o.scenario === 'normal')?.workOrderId ?? '';
      (r.snapshot.instances as Array<{ id: string; businessKey: string; status: string }>).push({ id: 'i-second', businessKey: first, status: 'COMPLETED' });
      (r.snapshot.invoiceJobs as Array<{ processInstanceId: string }>).push({ processInstanceId: 'i-second' });
    }, { scenario: 'normal', invariant: 'invoiced twice' }],
    ['a completed work order without invoice', (r) => void (r.snapshot.invoices as unknown[]).splice(0, 1), { invariant: 'without its invoice' }],
    ['the overtaking completion correlated by the relay, not the buffer', (r) => {
      const i = r.snapshot.inbox.findIndex((d) => d.correlatedVia === 'BUFFER');
      (r.snapshot.inbox as InboxView[])[i] = { ...(r.snapshot.inbox[i] as InboxView), correlatedVia: 'RELAY' };
    }, { scenario: 'overtake' }],
  ])('%s is reported', (_, breakIt, expected) => {
    const run = healthyRun();
    breakIt(run);
    const e = evaluate(run.plan, run.published, run.snapshot);
    expect(e.ok).toBe(false);
    if (expected.scenario !== undefined) expect(e.scenarios.find((s) => s.scenario === expected.scenario)?.ok).toBe(false);
    if (expected.invariant !== undefined) expect(e.invariants.find((i) => i.name.includes(expected.invariant ?? ''))?.violations.length).toBeGreaterThan(0);
  });

  test('observeOrder: a work order with no trace at all says so', () => {
    expect(observeOrder({ inbox: [], instances: [], invoices: [], invoiceJobs: [] }, 'WO-none')).toBe('no inbox document · no process · not invoiced');
  });

  test('the path shows only where the scenario is about it', () => {
    const snapshot: Snapshot = { inbox: [doc('a', 'WO-1', 'DONE', null, { correlatedVia: 'BUFFER' })], instances: [{ id: 'i', businessKey: 'WO-1', status: 'COMPLETED' }], invoices: [{ workOrderId: 'WO-1', processInstanceId: 'i' }], invoiceJobs: [] };
    expect(observeOrder(snapshot, 'WO-1')).toBe('DONE · COMPLETED · invoiced');
    expect(observeOrder(snapshot, 'WO-1', true)).toBe('DONE via buffer · COMPLETED · invoiced');
  });
});
