import { canonicalJson, sha256Hex } from '../../../../functions/src/core/hash';
import { WorkOrderCompletedSchema } from '../../messages';
import { evaluate, observeOrder, showsOf, type InboxView, type Published, type Snapshot } from '../../demo/evaluate';
import { formatLargeReports, mib } from '../../demo/large-reports';
import { MIN_ORDERS, OFFLOADED_ITEMS, OFFLOADED_MIB, planOrders, REFERENCE_ITEMS, SCENARIOS } from '../../demo/plan';
import { inlineReportCompletionOf, lineItemsOf } from '../../local/completions';

type Mutable<T> = {
  -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E>
    ? E[]
    : T[K] extends Readonly<Record<string, infer V>>
      ? Record<string, V>
      : T[K];
};
const empty: Snapshot = {
  inbox: [],
  instances: [],
  invoices: [],
  invoiceJobs: [],
  waitingTokens: [],
  timers: [],
  escalations: [],
  reminders: {},
  waitingListed: null,
  objects: {},
  payloadObjects: [],
  reportsSent: {},
};

describe('planOrders', () => {
  test.each([MIN_ORDERS, 40, 200, 1_000])(
    '%i orders: every scenario has at least one, shares as planned, ids unique',
    (orders) => {
      const plan = planOrders('r1', orders);
      expect(plan).toHaveLength(orders);
      expect(new Set(plan.map((o) => o.workOrderId)).size).toBe(orders);
      for (const s of SCENARIOS) {
        const count = plan.filter((o) => o.scenario === s.id).length;
        expect(count).toBeGreaterThanOrEqual(1);
        if (s.id !== 'normal')
          expect(count).toBe(s.count ?? Math.min(s.maxCount ?? Infinity, Math.max(1, Math.round(orders * s.share))));
        if (s.maxCount !== undefined) expect(count).toBeLessThanOrEqual(s.maxCount);
      }
      expect(plan.every((o) => o.workOrderId.startsWith('WO-r1-'))).toBe(true);
    },
  );

  test('the provider never answers three work orders, whatever the size, and they start with a deadline of seconds', () => {
    for (const orders of [MIN_ORDERS, 200, 5_000])
      expect(planOrders('r', orders).filter((o) => o.scenario === 'neverAnswered')).toHaveLength(3);
    const never = SCENARIOS.find((s) => s.id === 'neverAnswered');
    expect(never?.variables).toEqual({ completionDeadline: 'PT5S' });
    // Every other scenario keeps the model's 14 days.
    expect(SCENARIOS.filter((s) => s.variables?.['completionDeadline'] !== undefined).map((s) => s.id)).toEqual([
      'neverAnswered',
    ]);
  });

  test('one work order each sends a large report by reference and inline, whatever the size', () => {
    for (const orders of [MIN_ORDERS, 200, 5_000]) {
      const plan = planOrders('r', orders);
      expect(plan.filter((o) => o.scenario === 'reportByReference')).toHaveLength(1);
      expect(plan.filter((o) => o.scenario === 'reportOffloaded')).toHaveLength(1);
    }
    const byScript = Object.fromEntries(
      SCENARIOS.filter((s) => s.report !== undefined).map((s) => [s.providerScript, s.variables]),
    );
    expect(byScript).toEqual({
      reportByReference: { reportLineItems: String(REFERENCE_ITEMS) },
      reportInline: { reportLineItems: String(OFFLOADED_ITEMS) },
    });
  });

  test('the reports measure what the plan says: several MiB, the inline one far over the offload threshold and under 10 MiB', () => {
    // What the receiver offloads is the canonical JSON of the schema's output (whose SHA-256 is payloadHash).
    const inline = Buffer.byteLength(
      canonicalJson(WorkOrderCompletedSchema.parse(inlineReportCompletionOf('WO-mx4x4k8l-0001', OFFLOADED_ITEMS))),
      'utf8',
    );
    expect(mib(inline)).toBe(OFFLOADED_MIB);
    expect(inline).toBeGreaterThan(4 * 512 * 1024);
    expect(inline).toBeLessThan(9 * 1024 * 1024);
    const byReference = Buffer.byteLength(
      JSON.stringify({ workOrderId: 'WO-mx4x4k8l-0002', lineItems: lineItemsOf(REFERENCE_ITEMS) }),
      'utf8',
    );
    expect(byReference).toBeGreaterThan(2 * 1024 * 1024);
  });

  test.each([0, MIN_ORDERS - 1, 10.5, -1])('%p orders is refused', (orders) => {
    expect(() => planOrders('r', orders)).toThrow(`at least ${MIN_ORDERS}`);
  });
});

const doc = (
  id: string,
  key: string | null,
  status: string,
  reason: string | null = null,
  extra: Partial<InboxView> = {},
): InboxView => ({
  id,
  correlationKey: key,
  status,
  reason,
  correlatedVia: 'RELAY',
  deadLettered: false,
  payloadHash: null,
  reference: null,
  offloaded: null,
  ...extra,
});

/** A run of MIN_ORDERS orders where every order ended as its scenario expects. */
function healthyRun(): { plan: ReturnType<typeof planOrders>; published: Published; snapshot: Mutable<Snapshot> } {
  const plan = planOrders('t', MIN_ORDERS);
  const inbox: InboxView[] = [];
  const instances: Array<{ id: string; businessKey: string; status: string }> = [];
  const invoices: Mutable<Snapshot>['invoices'] = [];
  const invoiceJobs: Array<{ processInstanceId: string }> = [];
  const waitingTokens: Array<{ processInstanceId: string; activityId: string }> = [];
  const timers: Array<{ processInstanceId: string; activityId: string; status: string }> = [];
  const escalations: Array<{ workOrderId: string; processInstanceId: string }> = [];
  const reminders: Record<string, number> = {};
  const waitingListed: Array<{ businessKey: string; activityId: string; waitingSeconds: number }> = [];
  const completionIds = new Map<string, string>();
  const objects: Mutable<Snapshot>['objects'] = {};
  const payloadObjects: Mutable<Snapshot>['payloadObjects'] = [];
  const reportsSent: Mutable<Snapshot>['reportsSent'] = {};
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
    const claims = largeReportOf(o.scenario, id, o.workOrderId);
    inbox.push(
      doc(id, o.workOrderId, 'DONE', null, {
        correlatedVia: o.scenario === 'overtake' ? 'BUFFER' : 'RELAY',
        deadLettered: o.scenario === 'deadLetter',
        ...claims?.doc,
      }),
    );
    if (claims !== null) {
      Object.assign(objects, claims.objects);
      payloadObjects.push(...claims.payloadObjects);
      reportsSent[o.workOrderId] = claims.sent;
    }
    if (o.scenario === 'conflict') inbox.push(doc(`k-${o.workOrderId}`, o.workOrderId, 'PARKED', 'KEY_COLLISION'));
    instances.push({ id: instanceId, businessKey: o.workOrderId, status: 'COMPLETED' });
    const items = claims?.sent.lineItems ?? null;
    invoices.push({
      workOrderId: o.workOrderId,
      processInstanceId: instanceId,
      billedItems: items ?? 12,
      lineItemCount: items,
      report: claims?.uri ?? null,
    });
    invoiceJobs.push({ processInstanceId: instanceId });
  }
  inbox.push(doc('p-1', null, 'PARKED', 'INVALID_PAYLOAD'));
  return {
    plan,
    published: { completionIds, poisonIds: ['p-1'] },
    snapshot: {
      inbox,
      instances,
      invoices,
      invoiceJobs,
      waitingTokens,
      timers,
      escalations,
      reminders,
      waitingListed,
      objects,
      payloadObjects,
      reportsSent,
    },
  };
}

const HASH = sha256Hex('the offloaded payload');

/** A large report's document claim, its object, and what the provider sent, as a healthy run has them (null for other scenarios). */
function largeReportOf(
  scenario: string,
  inboxId: string,
  workOrderId: string,
): {
  doc: Partial<InboxView>;
  objects: Snapshot['objects'];
  payloadObjects: Snapshot['payloadObjects'];
  sent: Snapshot['reportsSent'][string];
  uri: string;
} | null {
  if (scenario === 'reportByReference') {
    const claim = {
      uri: `gs://demo-inbox-provider-reports/reports/${workOrderId}.json#17`,
      bucket: 'demo-inbox-provider-reports',
      object: `reports/${workOrderId}.json`,
      generation: '17',
      bytes: null,
    };
    return {
      doc: { reference: claim },
      objects: { [claim.uri]: { exists: true, bytes: 3_570_048, sha256: null } },
      payloadObjects: [],
      sent: { route: 'reference', lineItems: REFERENCE_ITEMS, bytes: 3_570_048, uri: claim.uri },
      uri: claim.uri,
    };
  }
  if (scenario === 'reportOffloaded') {
    const object = `payloads/${inboxId}/${HASH}.json`;
    const claim = {
      uri: `gs://demo-inbox-inbox-payloads/${object}#23`,
      bucket: 'demo-inbox-inbox-payloads',
      object,
      generation: '23',
      bytes: 5_355_153,
    };
    return {
      doc: { offloaded: claim, payloadHash: HASH },
      objects: { [claim.uri]: { exists: true, bytes: 5_355_153, sha256: HASH } },
      payloadObjects: [{ inboxId, name: object }],
      sent: { route: 'inline', lineItems: OFFLOADED_ITEMS, bytes: 5_355_200, uri: null },
      uri: claim.uri,
    };
  }
  return null;
}

describe('evaluate', () => {
  test('a healthy run: every scenario as expected, no invariant violated, totals by status and reason', () => {
    const { plan, published, snapshot } = healthyRun();
    const e = evaluate(plan, published, snapshot);
    expect(e.scenarios.filter((s) => !s.ok)).toEqual([]);
    expect(e.invariants.map((i) => i.violations)).toEqual([[], [], [], [], [], [], []]);
    expect(e.scenarios.find((s) => s.scenario === 'reportByReference')?.observed).toEqual([
      { outcome: 'DONE · reference FOUND · COMPLETED · invoiced 6000 line items', count: 1 },
    ]);
    expect(e.scenarios.find((s) => s.scenario === 'reportOffloaded')?.observed).toEqual([
      { outcome: 'DONE · offloaded 5.1 MiB · COMPLETED · invoiced 9000 line items', count: 1 },
    ]);
    expect(e.largeReports.map((r) => [r.route, r.lineItems, r.status, r.ok])).toEqual([
      ['reference', REFERENCE_ITEMS, 'DONE', true],
      ['offloaded', OFFLOADED_ITEMS, 'DONE', true],
    ]);
    expect(e.scenarios.find((s) => s.scenario === 'neverAnswered')).toMatchObject({
      count: 3,
      ok: true,
      observed: [
        {
          outcome:
            'no inbox document · RUNNING at waitForCompletion · escalated once, 1 reminder · in inbox waiting past its deadline · not invoiced',
          count: 3,
        },
      ],
    });
    expect(e.ok).toBe(true);
    expect(e.totals).toEqual([
      { status: 'DONE', reason: null, count: 11 },
      { status: 'PARKED', reason: 'AMBIGUOUS_CORRELATION', count: 1 },
      { status: 'PARKED', reason: 'INVALID_PAYLOAD', count: 1 },
      { status: 'PARKED', reason: 'KEY_COLLISION', count: 1 },
    ]);
  });

  // Each row breaks the healthy run in one way and names what must catch it.
  test.each<[string, (r: ReturnType<typeof healthyRun>) => void, { scenario?: string; invariant?: string }]>([
    [
      'a completion never stored',
      (r) => void r.snapshot.inbox.splice(0, 1),
      { scenario: 'duplicate', invariant: 'every published message' },
    ],
    [
      'a completion left OPEN',
      (r) => void (r.snapshot.inbox[0] = { ...(r.snapshot.inbox[0] as InboxView), status: 'OPEN' }),
      { invariant: 'every published message' },
    ],
    [
      'a PARKED document without a reason',
      (r) => void (r.snapshot.inbox[0] = { ...(r.snapshot.inbox[0] as InboxView), status: 'PARKED', reason: null }),
      { invariant: 'every published message' },
    ],
    [
      'a poison message lost',
      (r) => void r.snapshot.inbox.pop(),
      { scenario: 'poison', invariant: 'every published message' },
    ],
    [
      'a second instance billed the same work order',
      (r) => {
        const first = r.plan.find((o) => o.scenario === 'normal')?.workOrderId ?? '';
        (r.snapshot.instances as Array<{ id: string; businessKey: string; status: string }>).push({
          id: 'i-second',
          businessKey: first,
          status: 'COMPLETED',
        });
        (r.snapshot.invoiceJobs as Array<{ processInstanceId: string }>).push({ processInstanceId: 'i-second' });
      },
      { scenario: 'normal', invariant: 'invoiced twice' },
    ],
    [
      'a completed work order without invoice',
      (r) => void (r.snapshot.invoices as unknown[]).splice(0, 1),
      { invariant: 'without its invoice' },
    ],
    [
      'the overtaking completion correlated by the relay, not the buffer',
      (r) => {
        const i = r.snapshot.inbox.findIndex((d) => d.correlatedVia === 'BUFFER');
        r.snapshot.inbox[i] = { ...(r.snapshot.inbox[i] as InboxView), correlatedVia: 'RELAY' };
      },
      { scenario: 'overtake' },
    ],
    // The provider never answers: each way the promise could break.
    ...neverBroken(),
    // Large reports: each way a claim or its billing could go wrong.
    ...reportsBroken(),
  ])('%s is reported', (_, breakIt, expected) => {
    const run = healthyRun();
    breakIt(run);
    const e = evaluate(run.plan, run.published, run.snapshot);
    expect(e.ok).toBe(false);
    if (expected.scenario !== undefined)
      expect(e.scenarios.find((s) => s.scenario === expected.scenario)?.ok).toBe(false);
    if (expected.invariant !== undefined)
      expect(e.invariants.find((i) => i.name.includes(expected.invariant ?? ''))?.violations.length).toBeGreaterThan(0);
  });

  test('observeOrder: a work order with no trace at all says so', () => {
    expect(observeOrder(empty, 'WO-none')).toBe('no inbox document · no process · not invoiced');
    expect(observeOrder(empty, 'WO-none', showsOf('neverAnswered'))).toBe(
      'no inbox document · no process · escalated never, 0 reminders · not invoiced',
    );
  });

  test('the path shows only where the scenario is about it', () => {
    const snapshot: Snapshot = {
      ...empty,
      inbox: [doc('a', 'WO-1', 'DONE', null, { correlatedVia: 'BUFFER' })],
      instances: [{ id: 'i', businessKey: 'WO-1', status: 'COMPLETED' }],
      invoices: [{ workOrderId: 'WO-1', processInstanceId: 'i', billedItems: 12, lineItemCount: null, report: null }],
    };
    expect(observeOrder(snapshot, 'WO-1')).toBe('DONE · COMPLETED · invoiced');
    expect(observeOrder(snapshot, 'WO-1', { path: true })).toBe('DONE via buffer · COMPLETED · invoiced');
  });

  test('an escalation shows on any work order; `inbox waiting` only once the run asked it, and it must say past the deadline', () => {
    const base: Snapshot = {
      ...empty,
      instances: [{ id: 'i', businessKey: 'WO-1', status: 'RUNNING' }],
      waitingTokens: [{ processInstanceId: 'i', activityId: 'waitForCompletion' }],
      escalations: [{ workOrderId: 'WO-1', processInstanceId: 'i' }],
      reminders: { 'WO-1': 2 },
    };
    expect(observeOrder(base, 'WO-1')).toBe('no inbox document · RUNNING · escalated once, 2 reminders · not invoiced');
    const never = showsOf('neverAnswered');
    expect(never.waiting).toEqual({ deadlineSeconds: 5 });
    expect(observeOrder(base, 'WO-1', never)).toBe(
      'no inbox document · RUNNING at waitForCompletion · escalated once, 2 reminders · not invoiced',
    );
    const listed = (waitingSeconds: number): Snapshot => ({
      ...base,
      waitingListed: [{ businessKey: 'WO-1', activityId: 'waitForCompletion', waitingSeconds }],
    });
    expect(observeOrder(listed(5), 'WO-1', never)).toContain('· in inbox waiting past its deadline ·');
    expect(observeOrder(listed(4), 'WO-1', never)).toContain('· in inbox waiting only 4 s ·');
    expect(observeOrder({ ...base, waitingListed: [] }, 'WO-1', never)).toContain('· not in inbox waiting ·');
  });
});

type Breaker = [string, (r: ReturnType<typeof healthyRun>) => void, { scenario?: string; invariant?: string }];

/** Ways the never-answered scenario can go wrong, each with what must notice. */
function neverBroken(): Breaker[] {
  const never = (r: ReturnType<typeof healthyRun>): string =>
    r.plan.find((o) => o.scenario === 'neverAnswered')?.workOrderId ?? '';
  const normal = (r: ReturnType<typeof healthyRun>): string =>
    r.plan.find((o) => o.scenario === 'normal')?.workOrderId ?? '';
  return [
    [
      'a never-answered order not escalated',
      (r) => void (r.snapshot.escalations = r.snapshot.escalations.filter((e) => e.workOrderId !== never(r))),
      { scenario: 'neverAnswered', invariant: 'waits silently' },
    ],
    [
      'a never-answered order escalated twice',
      (r) => void r.snapshot.escalations.push({ workOrderId: never(r), processInstanceId: `i-${never(r)}` }),
      { scenario: 'neverAnswered', invariant: 'escalated twice' },
    ],
    ['the provider saw no reminder', (r) => void (r.snapshot.reminders = {}), { scenario: 'neverAnswered' }],
    [
      'the provider saw two reminders',
      (r) => void (r.snapshot.reminders = { ...r.snapshot.reminders, [never(r)]: 2 }),
      { scenario: 'neverAnswered' },
    ],
    [
      'the escalated token no longer waits',
      (r) =>
        void (r.snapshot.waitingTokens = r.snapshot.waitingTokens.filter(
          (t) => t.processInstanceId !== `i-${never(r)}`,
        )),
      { scenario: 'neverAnswered', invariant: 'waits silently' },
    ],
    [
      'the token waits elsewhere',
      (r) =>
        void (r.snapshot.waitingTokens = r.snapshot.waitingTokens.map((t) =>
          t.processInstanceId === `i-${never(r)}` ? { ...t, activityId: 'somewhere' } : t,
        )),
      { scenario: 'neverAnswered' },
    ],
    [
      'the instance ended (an interrupting timer)',
      (r) =>
        void (r.snapshot.instances = r.snapshot.instances.map((i) =>
          i.businessKey === never(r) ? { ...i, status: 'COMPLETED' } : i,
        )),
      { scenario: 'neverAnswered' },
    ],
    [
      'a never-answered order invoiced (the provider answered a reminder)',
      (r) => {
        r.snapshot.inbox.push(doc(`c-${never(r)}`, never(r), 'DONE'));
        r.snapshot.invoices.push({
          workOrderId: never(r),
          processInstanceId: `i-${never(r)}`,
          billedItems: 12,
          lineItemCount: null,
          report: null,
        });
      },
      { scenario: 'neverAnswered' },
    ],
    [
      'inbox waiting did not list one',
      (r) =>
        void (r.snapshot.waitingListed = (r.snapshot.waitingListed ?? []).filter((w) => w.businessKey !== never(r))),
      { scenario: 'neverAnswered' },
    ],
    [
      'a normal order escalated',
      (r) => void r.snapshot.escalations.push({ workOrderId: normal(r), processInstanceId: `i-${normal(r)}` }),
      { scenario: 'normal', invariant: 'before its deadline' },
    ],
    [
      'a timer left PENDING for an invoiced order',
      (r) =>
        void r.snapshot.timers.push({
          processInstanceId: `i-${normal(r)}`,
          activityId: 'completionOverdue',
          status: 'PENDING',
        }),
      { invariant: 'PENDING timer' },
    ],
    [
      'an order neither invoiced nor escalated nor in incident',
      (r) => {
        r.snapshot.invoices = r.snapshot.invoices.filter((v) => v.workOrderId !== normal(r));
        r.snapshot.instances = r.snapshot.instances.map((i) =>
          i.businessKey === normal(r) ? { ...i, status: 'RUNNING' } : i,
        );
      },
      { invariant: 'waits silently' },
    ],
  ];
}

/** Ways the large-report scenarios can go wrong, each with what must notice. */
function reportsBroken(): Breaker[] {
  const of = (r: ReturnType<typeof healthyRun>, scenario: string): { workOrderId: string; index: number } => {
    const workOrderId = r.plan.find((o) => o.scenario === scenario)?.workOrderId ?? '';
    return { workOrderId, index: r.snapshot.inbox.findIndex((d) => d.correlationKey === workOrderId) };
  };
  const invoice = (
    r: ReturnType<typeof healthyRun>,
    scenario: string,
    change: Partial<Snapshot['invoices'][number]>,
  ): void => {
    const { workOrderId } = of(r, scenario);
    r.snapshot.invoices = r.snapshot.invoices.map((i) => (i.workOrderId === workOrderId ? { ...i, ...change } : i));
  };
  const objectOf = (r: ReturnType<typeof healthyRun>, scenario: string): string => {
    const d = r.snapshot.inbox[of(r, scenario).index];
    return d?.reference?.uri ?? d?.offloaded?.uri ?? '';
  };
  return [
    [
      'the reference billed one item short',
      (r) => invoice(r, 'reportByReference', { billedItems: REFERENCE_ITEMS - 1, lineItemCount: REFERENCE_ITEMS - 1 }),
      { scenario: 'reportByReference', invariant: 'billed by its item count' },
    ],
    [
      'the offloaded report billed by completedItems, not by its line items',
      (r) => invoice(r, 'reportOffloaded', { billedItems: OFFLOADED_ITEMS, lineItemCount: null, report: null }),
      { scenario: 'reportOffloaded', invariant: 'billed by its item count' },
    ],
    [
      'the offloaded report billed 12 of its 9000 line items',
      (r) => invoice(r, 'reportOffloaded', { billedItems: 12 }),
      { scenario: 'reportOffloaded', invariant: 'billed by its item count' },
    ],
    [
      'the offloaded report invoiced twice',
      (r) => {
        const { workOrderId } = of(r, 'reportOffloaded');
        r.snapshot.invoices.push({
          workOrderId,
          processInstanceId: 'i-other',
          billedItems: OFFLOADED_ITEMS,
          lineItemCount: OFFLOADED_ITEMS,
          report: null,
        });
      },
      { scenario: 'reportOffloaded', invariant: 'billed by its item count' },
    ],
    [
      'the referenced object is gone',
      (r) =>
        void (r.snapshot.objects = {
          ...r.snapshot.objects,
          [objectOf(r, 'reportByReference')]: { exists: false, bytes: null, sha256: null },
        }),
      { scenario: 'reportByReference' },
    ],
    [
      'the document carries another reference than the provider sent',
      (r) => {
        const { index } = of(r, 'reportByReference');
        const d = r.snapshot.inbox[index] as InboxView;
        if (d.reference !== null)
          r.snapshot.inbox[index] = { ...d, reference: { ...d.reference, uri: d.reference.uri.replace('#17', '#18') } };
      },
      { scenario: 'reportByReference' },
    ],
    [
      'the inline report was not offloaded',
      (r) => {
        const { index } = of(r, 'reportOffloaded');
        r.snapshot.inbox[index] = { ...(r.snapshot.inbox[index] as InboxView), offloaded: null };
      },
      { scenario: 'reportOffloaded', invariant: 'offloaded payload has its document' },
    ],
    [
      'the offloaded object is missing',
      (r) =>
        void (r.snapshot.objects = {
          ...r.snapshot.objects,
          [objectOf(r, 'reportOffloaded')]: { exists: false, bytes: null, sha256: null },
        }),
      { scenario: 'reportOffloaded', invariant: 'offloaded payload has its document' },
    ],
    [
      'the offloaded object does not hash to payloadHash',
      (r) =>
        void (r.snapshot.objects = {
          ...r.snapshot.objects,
          [objectOf(r, 'reportOffloaded')]: { exists: true, bytes: 5_355_153, sha256: sha256Hex('other bytes') },
        }),
      { scenario: 'reportOffloaded', invariant: 'offloaded payload has its document' },
    ],
    [
      'the offloaded object is shorter than the document says',
      (r) =>
        void (r.snapshot.objects = {
          ...r.snapshot.objects,
          [objectOf(r, 'reportOffloaded')]: { exists: true, bytes: 5_355_152, sha256: HASH },
        }),
      { scenario: 'reportOffloaded', invariant: 'offloaded payload has its document' },
    ],
    [
      'an orphaned payload object of this run',
      (r) => void r.snapshot.payloadObjects.push({ inboxId: 'c-gone', name: `payloads/c-gone/${HASH}.json` }),
      { invariant: 'offloaded payload has its document' },
    ],
    [
      'the provider sent no report',
      (r) => void (r.snapshot.reportsSent = {}),
      { invariant: 'offloaded payload has its document' },
    ],
  ];
}

describe('large reports', () => {
  test('a wrong item count reads as such in the line', () => {
    const run = healthyRun();
    const wo = run.plan.find((o) => o.scenario === 'reportByReference')?.workOrderId ?? '';
    run.snapshot.invoices = run.snapshot.invoices.map((i) =>
      i.workOrderId === wo ? { ...i, billedItems: 5_999, lineItemCount: 5_999 } : i,
    );
    expect(observeOrder(run.snapshot, wo, showsOf('reportByReference'))).toBe(
      'DONE · reference FOUND · COMPLETED · invoiced 5999 line items',
    );
    const violations = evaluate(run.plan, run.published, run.snapshot).invariants.find((i) =>
      i.name.includes('item count'),
    )?.violations;
    expect(violations).toEqual([`${wo}: sent 6000 line items, billed 5999 (line items 5999)`]);
  });

  test('the summary after the table names both, their sizes, the verdict and the command that shows one', () => {
    const run = healthyRun();
    const e = evaluate(run.plan, run.published, run.snapshot);
    const [ref, off] = run.plan
      .filter((o) => o.scenario === 'reportByReference' || o.scenario === 'reportOffloaded')
      .map((o) => o.workOrderId);
    expect(formatLargeReports(e.largeReports)).toEqual([
      `Large reports: ${ref ?? ''} by reference (6000 items, 3.4 MiB, gs://demo-inbox-provider-reports/reports/${ref ?? ''}.json#17), ${off ?? ''} offloaded (9000 items, 5.1 MiB, gs://demo-inbox-inbox-payloads/payloads/c-${off ?? ''}/${HASH}.json#23) — both DONE and invoiced with the right count.`,
      `  An operator sees one, its claim and its object with: npm run inbox -- show c-${ref ?? ''}`,
    ]);
    run.snapshot.invoices = run.snapshot.invoices.filter((i) => i.workOrderId !== off);
    expect(formatLargeReports(evaluate(run.plan, run.published, run.snapshot).largeReports)[0]).toContain(
      '— NOT all DONE and invoiced with the right count.',
    );
  });
});
