import { runChaos } from '../chaos/run';

/**
 * The chaos run, small: every fault of `npm run test:chaos` (relays killed
 * mid-batch, a Firestore emulator restart, failing Cloud Tasks dispatches),
 * an operator who repairs meanwhile (cancel-token, move-token, requeue),
 * four last tranches racing their timers (planned from 3.7 s to 0.3 s
 * before the due time), and four work orders on the second model (a
 * parallel fork and join; an inspection that goes round its error boundary
 * loop once per finding, 2 and 1 rounds for two of them; a user task an
 * approver completes through `inbox tasks complete`; and "Ask the
 * approvers", a parallel multi-instance user task whose items the approver
 * answers in a random order, ended by its completion condition, the first
 * yes or the third answer, or after its last item), on fresh emulators of
 * its own, with a fixed seed. The full run (10,000
 * messages) is `npm run test:chaos`; docs/reliability.md has its line.
 */
// The run starts emulators of its own and exports their hosts into process.env; the next test file must get the suite's back.
const saved = { firestore: process.env.FIRESTORE_EMULATOR_HOST, pubsub: process.env.PUBSUB_EMULATOR_HOST };
afterAll(() => {
  for (const [name, value] of [
    ['FIRESTORE_EMULATOR_HOST', saved.firestore],
    ['PUBSUB_EMULATOR_HOST', saved.pubsub],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

test('a small chaos run: nothing lost, nothing correlated or invoiced twice, every order invoiced or (race lost) overdue, every inspected order round its loop and through its join once', async () => {
  const lines: string[] = [];
  const result = await runChaos({
    seed: 20261130,
    orders: 12,
    messages: 60,
    relayKills: 2,
    firestoreRestarts: 1,
    dispatchFaults: 1,
    repairs: 8,
    inspections: 4,
    downMs: 2_000,
    maxBacklog: 100,
    settleTimeoutMs: 240_000,
    progress: (line) => lines.push(line),
  });
  expect(result.counts.violations).toEqual([]);
  expect(result.counts).toMatchObject({
    messages: 60,
    lost: 0,
    doubleCorrelations: 0,
    doubleInvoices: 0,
    races: 4,
    bothPaths: 0,
  });
  // Each race went one way: the timer's (recorded overdue, not invoiced) or the completion's (invoiced).
  const { racesWonByTimer, racesWonByCompletion, ordersInvoiced, ordersOverdue, ordersCancelled } = result.counts;
  expect(racesWonByTimer + racesWonByCompletion).toBe(4);
  // Every order invoiced, or recorded overdue (its race lost), or cancelled on purpose by the operator (recorded on the instance).
  expect(ordersInvoiced + ordersOverdue + ordersCancelled).toBe(12);
  expect(ordersOverdue).toBe(racesWonByTimer);
  expect(ordersCancelled).toBe(result.operator.cancelled);
  // The operator did repair: eight repairs, each done, refused (by the dry run or at the confirmation) or failed.
  const { cancelled, moved, requeued, refusedAtPreview, refusedAtConfirm, failed, nothingToDo, abandoned } =
    result.operator;
  expect(cancelled + moved + requeued + refusedAtPreview + refusedAtConfirm + failed + nothingToDo + abandoned).toBe(8);
  // At least one cancel or move landed; when none did, the failure says what each repair came to and why.
  if (cancelled + moved === 0)
    throw new Error(`no cancel or move landed: ${JSON.stringify(result.operator)}\n${lines.join('\n')}`);
  expect(result.races.map((r) => r.publishedOffsetMs === null)).toEqual([false, false, false, false]);
  // Poison and collisions parked with their reason; completions DONE, but those that lost their race or came after their order's cancel.
  expect(result.counts.done).toBeLessThanOrEqual(12 * 4 - racesWonByTimer);
  if (ordersCancelled === 0) expect(result.counts.done).toBe(12 * 4 - racesWonByTimer);
  expect(
    (result.counts.parkedByReason.INVALID_PAYLOAD ?? 0) +
      (result.counts.parkedByReason.KEY_COLLISION ?? 0) +
      (result.counts.parkedByReason.DEAD_LETTERED ?? 0),
  ).toBe(2);
  expect(result.faults.map((f) => f.kind).sort()).toEqual([
    'deploy',
    'dispatch-faults',
    'firestore-restart',
    'relay-kill',
    'relay-kill',
  ]);
  expect(result.faults.find((f) => f.kind === 'firestore-restart')?.note).toMatch(/^RESTARTED/);
  // The mid-run deploy stored a second version of both models; every instance runs on a stored one, and both are used.
  expect(result.versions.unstored).toBe(0);
  expect(Object.values(result.versions.byProcess).map((counts) => counts.length)).toEqual([2, 2]);
  expect(Object.entries(result.versions.byProcess).filter(([, counts]) => counts.some((n) => n === 0))).toEqual([]);
  expect(result.line).toContain('lost 0, double correlations 0, double invoices 0');
  expect(result.line).toContain('operator repairs: cancelled');
  // The second model: each of the 4 through its join once, nothing left; the error loop round exactly once per finding (2 and 1), each
  // round recorded once, then the inspection passed once; each user task completed once, by the approver's request; "Ask the approvers"
  // ended once each, as its condition says, with exactly the answers taken in its output, and the step after it run once.
  expect(result.counts.inspection).toMatchObject({
    orders: 4,
    throughJoin: 4,
    defectsPlanned: 2,
    roundsPlanned: 3,
    rounds: 3,
    defectRecords: 3,
    passedAtEnd: 4,
    userTasksCompleted: 4,
    // The plan repeats 2 completions with their request id (each must answer "already completed") and has a second person try 1 (refused).
    repeatsAnswered: 2,
    secondPersonsRefused: 1,
    approvalsEnded: 4,
    outputsExact: 4,
    talliedOnce: 4,
    stuck: 0,
    violations: [],
  });
  const { endedByCondition, endedAllAnswered, lateAnswersRefused } = result.counts.inspection;
  expect(endedByCondition + endedAllAnswered).toBe(4);
  // One order's two approvers both say no: it ends after its last item; two have an approver who answers after a yes: a late answer, refused.
  expect(endedAllAnswered).toBeGreaterThanOrEqual(1);
  expect(lateAnswersRefused).toBeGreaterThanOrEqual(1);
  // The approver completed each once (a task a repair moved away from it is cancelled, and its new one completed).
  expect(result.approver.completed).toBe(4);
  expect(result.approver.lateRefused).toBe(lateAnswersRefused);
  expect(result.approver.wrong).toEqual([]);
  expect(result.line).toContain(
    'inspected work orders 4 (through the join 4, error loops 3 of 3 rounds on 2 orders with findings, defect records 3, passed at the end 4',
  );
  expect(result.line).toMatch(
    /approvals ended 4 \(condition \d, all answered \d\), outputs exact 4, late answers refused \d+, tallied once 4, stuck 0\)/,
  );
  // The run's line and its races, for docs/reliability.md (the figure quoted there comes from here).
  console.log(
    [
      result.line,
      `approver: ${JSON.stringify({ ...result.approver, answers: result.approver.answers.length })}`,
      ...result.approver.answers.map(
        (a) => `answer ${a.workOrderId} ${a.approver} ${a.approves ? 'yes' : 'no'}: ${a.outcome}`,
      ),
      ...result.races.map(
        (r) =>
          `race ${r.workOrderId}: planned ${r.plannedOffsetMs} ms, published ${r.publishedOffsetMs ?? '?'} ms from the due time`,
      ),
    ].join('\n'),
  );
}, 420_000);
