/** The result of `npm run bench:relay` (its --json output) and its human summary. */
import type { LatencyResult } from './relay-latency';
import type { BacklogCheck } from './relay-setup';

export interface BenchResult {
  machine: Record<string, unknown>;
  args: string[];
  throughput: {
    messages: number;
    concurrency: number;
    relayMode: string;
    relayPerSecond: number;
    barePerSecond: number;
    ratio: number;
    /** Each timed half, in the order run (bare, relay, relay, bare). */
    halves: Array<{ side: string; documents: number; seconds: number; perSecond: number }>;
    /** CPU of this process (where both the relay and the bare transactions run), per document. */
    benchProcessCpuMsPerMessage: { relay: number; bare: number };
    firestoreEmulatorCpuMsPerMessage: { relay: number; bare: number } | null;
    relayRounds: number;
    /** One round of the candidate query (16 shard queries) on each full relay backlog, ms. */
    candidateQueryRoundMs: number[];
    relayTechnicalFailures: number;
    relayWarnings: number;
    relayErrors: number;
    relayLogSamples: string[];
  };
  /**
   * Per correlated message, from the relay's own counters: every attempt of
   * every relay transaction (held back, skipped, failed and contention
   * retries included) and the candidate queries.
   */
  cost: {
    correlated: number;
    /** Reads of the relay's transactions, all attempts. */
    readsPerMessage: number;
    /** Writes of the relay's committed transactions. */
    writesPerMessage: number;
    /** Reads billed for the candidate queries (documents listed, at least one per shard query). */
    candidateQueryReadsPerMessage: number;
    /** The headline: all reads + writes, candidate queries included. */
    readsPlusWritesPerMessage: number;
    /** Documents the candidate query returned, outside the transaction. */
    candidateQueryDocsPerMessage: number;
    /** Firestore writes after the commit to record a dispatch (none since jobs no longer record it). */
    dispatchWritesPerMessage: number;
    cloudTasksCallsPerMessage: number;
    /** The receiver's one batch: inbox document create + lane entry (arrayUnion). */
    receiverWritesPerMessage: number;
  };
  latency: LatencyResult;
  checks: Array<BacklogCheck & { project: string; ok: boolean }>;
  setupSeconds: number;
  totalSeconds: number;
  targets: Record<string, string>;
  ok: boolean;
}

const share = (part: number, whole: number): string => `${whole > 0 ? Math.round((part / whole) * 100) : 0} %`;

const pairs = (values: Readonly<Record<string, number>>, unit: string): string =>
  Object.entries(values)
    .map(([k, v]) => `${k} ${v}${unit}`)
    .join(', ');

export function printReport(r: BenchResult): void {
  const t = r.throughput;
  const k = r.cost;
  const l = r.latency;
  const f = l.fastPath;
  const emulatorCpu = t.firestoreEmulatorCpuMsPerMessage;
  const lines = [
    `relay: ${t.relayPerSecond} docs/s   bare transactions: ${t.barePerSecond} docs/s   ratio relay/bare: ${t.ratio} (target >= 0.8)   (${t.messages} documents, concurrency ${t.concurrency})`,
    `  halves in order: ${t.halves.map((h) => `${h.side} ${h.perSecond}/s`).join(', ')}`,
    `  relay = ${t.relayMode}; ${t.relayRounds} rounds (a candidate-query round on a full backlog: ${t.candidateQueryRoundMs.join(', ')} ms), ${t.relayTechnicalFailures} technical failures`,
    `  CPU per document: this process relay ${t.benchProcessCpuMsPerMessage.relay} ms, bare ${t.benchProcessCpuMsPerMessage.bare} ms` +
      (emulatorCpu === null ? '' : `; Firestore emulator relay ${emulatorCpu.relay} ms, bare ${emulatorCpu.bare} ms`),
    `all reads+writes / correlated message, candidate queries included: ${k.readsPlusWritesPerMessage} (target <= 10)   (${k.correlated} correlated)`,
    `  = ${k.readsPerMessage} transaction reads (every attempt) + ${k.writesPerMessage} writes + ${k.candidateQueryReadsPerMessage} candidate-query reads (${k.candidateQueryDocsPerMessage} documents listed)`,
    `  besides: ${k.cloudTasksCallsPerMessage} Cloud Tasks call; the receiver: ${k.receiverWritesPerMessage} writes (inbox doc + lane entry, one batch)`,
    ...(l.capacity === null
      ? [`capacity: not searched (--rate given)`]
      : [
          `capacity: ${l.capacity.sustainedPerSecond} messages/s sustained` +
            (l.capacity.failedPerSecond === null ? '' : `, ${l.capacity.failedPerSecond}/s not`) +
            ` (${l.capacity.windowSeconds} s windows; ${l.capacity.criterion})`,
          `  steps: ${l.capacity.steps.map((s) => `${s.rate}/s ${s.sustained ? 'ok' : 'NO'} (backlog ${s.backlogMid}->${s.backlogEnd}, finished ${s.finishedPerSecond}/s)`).join('; ')}`,
        ]),
    `publish -> DONE at ${l.rate}/s${l.capacity === null ? '' : ' (80 % of capacity)'} (${l.messages} messages over ${l.publishSeconds} s): p50 ${l.p50Ms} ms  p95 ${l.p95Ms} ms  p99 ${l.p99Ms} ms  max ${l.maxMs} ms (targets p50 <= 1000, p99 <= 3000)   DONE ${l.done}/${l.messages}` +
      (l.missing + l.notDone > 0 ? `  MISSING ${l.missing}  NOT DONE ${l.notDone}` : ''),
    `  publish -> stored p50 ${l.publishToStoredP50Ms} ms (p99 ${l.publishToStoredP99Ms}); stored -> DONE p50 ${l.storedToDoneP50Ms} ms (p99 ${l.storedToDoneP99Ms})`,
    `  fast path (${f.tasks} tasks, ${f.retriedOrFailed} retried/failed): stored -> task dispatched p50 ${f.storedToDispatch.p50Ms} ms (p99 ${f.storedToDispatch.p99Ms}), dispatched -> relay transaction p50 ${f.dispatchToTransaction.p50Ms} ms (p99 ${f.dispatchToTransaction.p99Ms}), relayInbox call p50 ${f.relayCall.p50Ms} ms (p99 ${f.relayCall.p99Ms})`,
    `  hops (p50/p99 ms): receipt -> fast-path task created ${l.hops.receiptToTaskCreated.p50Ms}/${l.hops.receiptToTaskCreated.p99Ms}, created -> dispatched ${l.hops.createdToDispatched.p50Ms}/${l.hops.createdToDispatched.p99Ms}, dispatched -> relay transaction began ${l.hops.dispatchedToTransaction.p50Ms}/${l.hops.dispatchedToTransaction.p99Ms}, began -> relayInbox answered ${l.hops.transactionToAnswer.p50Ms}/${l.hops.transactionToAnswer.p99Ms}`,
    `  stored ${l.storedPerSecond}/s, DONE ${l.donePerSecond}/s over the run; p50 of the first tenth published ${l.firstTenthP50Ms} ms, of the last tenth ${l.lastTenthP50Ms} ms`,
    `  CPU while measuring (${l.cpu.wallSeconds} s): machine ${l.cpu.machineBusyPercent}% busy; % of one core: ${pairs(l.cpu.corePercent, '%')}`,
    `  CPU ms per message: ${pairs(l.cpu.msPerMessage, '')}; together ${l.cpu.totalMsPerMessage} ms, i.e. at most ~${l.cpu.sustainablePerSecond}/s on ${String(r.machine.nproc)} cores`,
    `  of which the functions (receiver + relayInbox + runJob) ${l.cpu.functionsMsPerMessage} ms (${share(l.cpu.functionsMsPerMessage, l.cpu.totalMsPerMessage)}), the Firestore + Pub/Sub emulators ${l.cpu.emulatorsMsPerMessage} ms (${share(l.cpu.emulatorsMsPerMessage, l.cpu.totalMsPerMessage)}), the bench process (publisher + the in-process Cloud Tasks emulator) ${l.cpu.msPerMessage.bench ?? 0} ms`,
    `  orders COMPLETED ${l.instancesCompleted}, invoices ${l.invoices}, invoice jobs ${l.invoiceJobs} (of ${l.orders}); function log warnings ${l.functionWarnings}, errors ${l.functionErrors}`,
    ...r.checks
      .filter((c) => !c.ok)
      .map(
        (c) =>
          `CHECK FAILED ${c.project}: DONE ${c.done}, not DONE ${c.notDone}, missing ${c.missing}, invoice jobs ${c.invoiceJobs}, waiting points left ${c.waitingPoints}`,
      ),
    ...t.relayLogSamples.map((x) => `  log (relay, part 1): ${x}`),
    ...l.functionLogSamples.map((x) => `  log (functions, part 3): ${x}`),
    `checks: ${r.ok ? 'ok' : 'FAILED'}   machine: ${String(r.machine.nproc)} cores, node ${String(r.machine.node)}   setup ${r.setupSeconds} s, total ${r.totalSeconds} s`,
  ];
  for (const line of lines) console.log(line);
}
