import { formatTable } from '../../../tools/local/table';
import { formatLargeReports } from './large-reports';
import type { DemoResult } from './run';
import { providerStats } from '../local/provider-stats';

const mark = (ok: boolean): string => (ok ? 'ok' : 'FAILED');

/** The report for people: scenarios, totals, invariants, what was run. */
export function formatReport(r: DemoResult): string {
  const e = r.evaluation;
  const scenarios = formatTable(
    ['scenario', 'n', 'expected', 'observed', ''],
    e.scenarios.map((s) => [
      s.title,
      s.count,
      s.expected,
      s.observed.map((o) => (s.observed.length === 1 ? o.outcome : `${o.count}× ${o.outcome}`)).join('; '),
      mark(s.ok),
    ]),
  );
  const totals = formatTable(
    ['status', 'reason', 'documents'],
    e.totals.map((t) => [t.status, t.reason ?? '', t.count]),
  );
  const invariants = formatTable(
    ['invariant', 'violations', ''],
    e.invariants.map((i) => [
      i.name,
      i.violations.length === 0
        ? 'none'
        : `${i.violations.length}: ${i.violations.slice(0, 3).join('; ')}${i.violations.length > 3 ? '; …' : ''}`,
      mark(i.violations.length === 0),
    ]),
  );
  const receiver = r.status.functions.receivePubSubPush;
  const evidence = [
    r.outage === null
      ? null
      : `Firestore outage: emulator ${r.outage.kind === 'RESTARTED' ? 'stopped and restarted' : 'cut off'}, ${(r.outage.totalMs / 1000).toFixed(1)} s without Firestore; the receiver answered ${receiver.notAcked} deliveries 5xx (not acked), Pub/Sub redelivered them.`,
    `Relay: ${r.status.relaySchedule.calls} scheduled calls; functions logged ${sum(r, 'warnings')} warnings and ${sum(r, 'errors')} errors (parked messages are logged as ERROR, by design).`,
    r.neverAnswered.length === 0
      ? 'Never answered: `inbox waiting` listed none of them.'
      : `Never answered: \`inbox waiting\` listed ${r.neverAnswered.map((w) => `${w.workOrderId} at ${w.activityId} for ${w.waitingSeconds} s`).join(', ')}; the simulated provider got ${sumReminders(r)} reminder(s) and answered none.`,
    ...formatLargeReports(e.largeReports),
    r.commands.length === 0
      ? 'Operator commands run: none'
      : 'Operator commands run (a repair is one command; `waiting` and `show` only look):',
    ...r.commands.map((c) => `  ${c}`),
  ].filter((l): l is string => l !== null);
  const phases = r.phases.map(
    (p) => `  ${p.seconds.toFixed(1).padStart(6)} s  ${p.phase}${p.error === null ? '' : ' (FAILED)'}`,
  );
  const failedPhases = r.phases
    .filter((p) => p.error !== null)
    .map((p) => `Phase "${p.phase}" FAILED: ${p.error ?? ''}`);
  return [
    `Demo run ${r.run}: ${r.orders} work orders, ${r.messagesPublished} messages published, ${r.seconds} s.`,
    '',
    scenarios,
    '',
    totals,
    '',
    invariants,
    '',
    ...evidence,
    'Phases:',
    ...phases,
    ...failedPhases,
    '',
    r.ok ? 'Every scenario ended as expected and every invariant holds.' : 'NOT as expected: see FAILED above.',
  ].join('\n');
}

function sumReminders(r: DemoResult): number {
  const prefix = `WO-${r.run}-`;
  return Object.entries(providerStats(r.status).remindersByWorkOrder).reduce(
    (n, [workOrderId, count]) => (workOrderId.startsWith(prefix) ? n + count : n),
    0,
  );
}

function sum(r: DemoResult, field: 'warnings' | 'errors'): number {
  return Object.values(r.status.functions).reduce((n, f) => n + f[field], 0);
}
