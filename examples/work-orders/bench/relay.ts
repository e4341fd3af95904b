/**
 * `npm run bench:relay`: what does the relay cost beyond its transaction?
 *
 * 1. Throughput. Backlogs of OPEN completions for work orders waiting at
 *    waitForCompletion (built with the engine's own operations, stored as
 *    the receiver stores them; not timed) are drained (a) by the relay,
 *    relayBatch in this process as a scheduled relayInbox call would run it,
 *    dispatching the invoice jobs to the Cloud Tasks emulator (queue paused),
 *    and (b) by bare Firestore transactions making the same reads and writes
 *    (bench/relay-bare.ts) at the same concurrency. Halves in mirrored order
 *    (bare, relay, relay, bare), each half a project of its own on the same
 *    emulator. Prints both rates and the ratio relay/bare (target >= 0.8).
 * 2. All Firestore reads + writes per correlated message, candidate queries
 *    included, from the relay's own counters: every attempt of every relay
 *    transaction (held back, skipped, failed, contention retries) plus the
 *    candidate queries' billed reads (target <= 10 together; the breakdown is
 *    printed too).
 * 3. Capacity, then latency below it (bench/relay-latency.ts,
 *    relay-capacity.ts): first the highest publish rate the local stack
 *    (Pub/Sub push, the receiver, the fast path, relayInbox, runJob's invoice
 *    job) sustains, by doubling and bisecting short windows until the backlog
 *    of unfinished work orders stops growing; then publish-to-DONE latency at
 *    80 % of it (targets p50 <= 1 s, p99 <= 3 s) and the stack's CPU per
 *    message, split by process.
 * Exits 1 if a document is missing, not DONE, or correlated twice.
 *
 * Flags: --n=5000 --concurrency=32 --setup-concurrency=32 --latency-n=600
 *        --wait=60 (seconds)
 *        --rate=N (latency at N/s, no capacity search) --capacity-window=20 (s per step) --capacity-start=10 (/s)
 *        --batch-size=200 (relay candidates per round) --json
 *        --no-dispatch (analysis: the relay's job queue fails at once, so no
 *        Cloud Tasks call; the jobs stay for the sweep)
 */
import type { Firestore } from '@google-cloud/firestore';
import { loadConfig } from '../../../functions/src/config';
import { createFirestore } from '../../../functions/src/firestore';
import { createLogger } from '../../../functions/src/log';
import { findCandidates } from '../../../functions/src/relay/candidates';
import { emptySummary, relayBatch, type RelaySummary } from '../../../functions/src/relay/relay-batch';
import type { RelayDeps } from '../../../functions/src/relay/relay-one';
import { cloudTasksQueue, type JobQueue } from '../../../functions/src/tasks/job-queue';
import { emulatorClient, startCloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import { useEmulators } from '../../../tools/local/use-emulators';
import { argNumber, cpuMs, runPool } from './pool';
import { bareRelay } from './relay-bare';
import { measureLatency } from './relay-latency';
import { type BenchResult, printReport } from './relay-report';
import { buildBacklog, checkBacklog, completionId, drainedOnce, workOrderEngine } from './relay-setup';
import { addSummary, emulatorPid, machine, ownCpuMs, round } from './relay-stats';
import { errorMessage } from '../../../functions/src/core/errors';

const N = argNumber('n', 5_000);
const CONCURRENCY = argNumber('concurrency', 32);
const SETUP_CONCURRENCY = argNumber('setup-concurrency', 32);
const LATENCY_N = argNumber('latency-n', 600);
/** --rate=N: the latency run at N/s, no capacity search; default: 80 % of the capacity found first. */
const RATE = process.argv.some((a) => a.startsWith('--rate=')) ? argNumber('rate', 25) : null;
const CAPACITY_WINDOW_S = argNumber('capacity-window', 20);
const CAPACITY_START = argNumber('capacity-start', 10);
const WAIT_MS = argNumber('wait', 60) * 1000;
/** Candidates per relay round; default: the deployed default (INBOX_RELAY_BATCH_SIZE). */
const BATCH_SIZE = process.argv.some((a) => a.startsWith('--batch-size=')) ? argNumber('batch-size', 200) : null;
const JSON_OUTPUT = process.argv.includes('--json');
/** Analysis only: the relay's job queue does nothing (no Cloud Tasks call). */
const NO_DISPATCH = process.argv.includes('--no-dispatch');
/** Orders per side drained before the measurement (JIT, connections, the emulator's caches). */
const WARMUP = 64;
const progress = (line: string): void => void process.stderr.write(`# ${line}\n`);

type Side = 'bare' | 'relay';
interface Half {
  readonly side: Side;
  readonly project: string;
  readonly db: Firestore;
  readonly orders: readonly string[];
}

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  const began = Date.now();
  const emulators = await useEmulators();
  // Stopped in reverse order, each even if another fails; the emulators last.
  const cleanup: Array<() => Promise<void>> = [];
  try {
    // When each task was created (its short id → ms): the fast path's hops in part 3 are timed from it.
    const taskCreated = new Map<string, number>();
    const tasks = await startCloudTasksEmulator({
      log: (line) => {
        const created = /^rpc CreateTask (\S+) -> OK$/.exec(line);
        if (created !== null)
          taskCreated.set((created[1] as string).slice((created[1] as string).lastIndexOf('/') + 1), Date.now());
      },
    });
    cleanup.push(() => tasks.stop());
    const engine = await workOrderEngine();
    const run = Date.now().toString(36);
    const half = (side: Side, label: string, count: number): Half => {
      const project = `bench-${side}-${label}-${run}`;
      const db = createFirestore(project);
      cleanup.push(() => db.terminate());
      return { side, project, db, orders: Array.from({ length: count }, (_, i) => `WO-${side}-${label}-${i}`) };
    };
    const firstHalf = Math.floor(N / 2);
    // Mirrored order, so drift on a shared machine (the emulator's JIT, its growing data) hits both sides alike.
    const measured = [
      half('bare', 'a', firstHalf),
      half('relay', 'a', firstHalf),
      half('relay', 'b', N - firstHalf),
      half('bare', 'b', N - firstHalf),
    ];
    const warm = [half('relay', 'warm', WARMUP), half('bare', 'warm', WARMUP)];

    // The relay's settings as deployed, except parallelism (default 8): one call at a time, as Cloud Scheduler makes them.
    const configOf = (project: string): ReturnType<typeof loadConfig> =>
      loadConfig({
        GOOGLE_CLOUD_PROJECT: project,
        INBOX_PUSH_AUTH: 'disabled',
        INBOX_TASKS_EMULATOR_HOST: tasks.host,
        INBOX_RUN_JOB_URL: 'http://127.0.0.1:9/',
        ...(BATCH_SIZE === null ? {} : { INBOX_RELAY_BATCH_SIZE: String(BATCH_SIZE) }),
      });
    const setupStart = Date.now();
    const admin = emulatorClient(tasks.host);
    try {
      for (const h of [...warm, ...measured]) {
        const started = Date.now();
        await buildBacklog(h.db, engine, h.orders, {
          concurrency: SETUP_CONCURRENCY,
          store: true,
          shards: configOf(h.project).shards,
        });
        progress(
          `setup ${h.project}: ${h.orders.length} waiting orders with OPEN completions in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
        if (h.side === 'relay') {
          // The invoice jobs' queue, paused: the relay creates its tasks, nothing runs them during the measurement.
          const c = configOf(h.project);
          const name = `projects/${h.project}/locations/${c.tasks.location}/queues/${c.tasks.queue}`;
          await admin.createQueue({ parent: `projects/${h.project}/locations/${c.tasks.location}`, queue: { name } });
          await admin.pauseQueue({ name });
        }
      }
    } finally {
      await admin.close();
    }
    const setupSeconds = (Date.now() - setupStart) / 1000;

    const logs = { warnings: 0, errors: 0, first: [] as string[] };
    const log = createLogger((line) => {
      const { severity, message } = JSON.parse(line) as { severity?: string; message?: string };
      if (NO_DISPATCH && message?.startsWith('could not create the job task') === true) return;
      if (severity === 'WARNING') logs.warnings += 1;
      if (severity === 'ERROR') logs.errors += 1;
      if ((severity === 'WARNING' || severity === 'ERROR') && logs.first.length < 3) logs.first.push(line);
    });
    const summary = emptySummary();
    let dispatched = 0;
    /** Drains a half; the relay's summary and Cloud Tasks calls, or null for the bare side. */
    const drain: Record<Side, (h: Half) => Promise<{ summary: RelaySummary; dispatched: number } | null>> = {
      bare: async (h) => {
        await runPool(h.orders.length, CONCURRENCY, async (i) => {
          await bareRelay(h.db, completionId(h.orders[i] as string));
        });
        return null;
      },
      relay: async (h) => {
        const c = configOf(h.project);
        const inner: JobQueue = NO_DISPATCH
          ? { enqueue: () => Promise.reject(new Error('--no-dispatch')) }
          : cloudTasksQueue(c, 'http://127.0.0.1:9/');
        const total = { summary: emptySummary(), dispatched: 0 };
        const queue: JobQueue = {
          enqueue: (id) => {
            if (!NO_DISPATCH) total.dispatched += 1;
            return inner.enqueue(id);
          },
        };
        const deps: RelayDeps = {
          db: h.db,
          engine,
          policy: c.relay.policy,
          retentionMs: c.relay.retentionMs,
          transactionTimeoutMs: c.relay.transactionTimeoutMs,
          now: () => new Date(),
          random: Math.random,
        };
        // Further calls only if one spent its whole budget (the next scheduler tick, back to back).
        for (;;) {
          const s = await relayBatch(deps, { jobs: queue, timers: queue }, log, {
            budgetMs: c.relay.budgetMs,
            parallelism: CONCURRENCY,
            batchSize: c.relay.batchSize,
            shards: c.shards,
          });
          addSummary(total.summary, s);
          if (s.correlated === 0 || s.durationMs < c.relay.budgetMs) return total;
        }
      },
    };
    for (const h of warm) await drain[h.side](h);

    const javaPid = await emulatorPid('firestore', emulators.firestoreHost);
    const elapsed: Record<Side, number> = { bare: 0, relay: 0 };
    const cpu: Record<Side, number> = { bare: 0, relay: 0 };
    const emulatorCpu: Record<Side, number> = { bare: 0, relay: 0 };
    const candidateRoundMs: number[] = [];
    const halves: BenchResult['throughput']['halves'] = [];
    for (const h of measured) {
      if (h.side === 'relay') {
        // One round of the candidate query on the full backlog, untimed otherwise: what each relay round starts with.
        const c = configOf(h.project);
        const queried = Date.now();
        await findCandidates(h.db, c.shards, new Date(), Math.ceil(c.relay.batchSize / c.shards));
        candidateRoundMs.push(Date.now() - queried);
      }
      const [cpuBefore, javaBefore] = [ownCpuMs(), javaPid === null ? 0 : await cpuMs(javaPid)];
      const started = process.hrtime.bigint();
      const relayed = await drain[h.side](h);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      elapsed[h.side] += seconds;
      cpu[h.side] += ownCpuMs() - cpuBefore;
      emulatorCpu[h.side] += (javaPid === null ? 0 : await cpuMs(javaPid)) - javaBefore;
      if (relayed !== null) {
        addSummary(summary, relayed.summary);
        dispatched += relayed.dispatched;
      }
      halves.push({
        side: h.side,
        documents: h.orders.length,
        seconds: round(seconds, 2),
        perSecond: round(h.orders.length / seconds, 1),
      });
    }
    const checks: BenchResult['checks'] = [];
    for (const h of [...warm, ...measured]) {
      const c = await checkBacklog(h.db, h.orders);
      checks.push({ project: h.project, ...c, ok: drainedOnce(c, h.orders.length) });
    }

    const latency = await measureLatency({
      projectId: `bench-latency-${run}`,
      firestoreHost: emulators.firestoreHost,
      pubsubHost: emulators.pubsubHost,
      tasks,
      taskCreated,
      engine,
      messages: LATENCY_N,
      warmup: Math.min(50, LATENCY_N),
      rate: RATE,
      capacityWindowSeconds: CAPACITY_WINDOW_S,
      capacityStartRate: CAPACITY_START,
      setupConcurrency: SETUP_CONCURRENCY,
      waitMs: WAIT_MS,
      progress,
    });
    const latencyOk =
      latency.done === LATENCY_N &&
      [latency.instancesCompleted, latency.invoices, latency.invoiceJobs].every((count) => count === latency.orders);

    const relayRate = N / elapsed.relay;
    const bareRate = N / elapsed.bare;
    const per = (value: number): number => round(value / Math.max(1, summary.correlated), 2);
    const result: BenchResult = {
      machine: machine(),
      args: process.argv.slice(2),
      throughput: {
        messages: N,
        concurrency: CONCURRENCY,
        relayMode: `one relayBatch call at a time (as Cloud Scheduler calls relayInbox), parallelism ${CONCURRENCY}, batchSize ${configOf('x').relay.batchSize}, ${configOf('x').shards} shards, ${NO_DISPATCH ? 'invoice jobs NOT dispatched (--no-dispatch)' : 'invoice jobs dispatched to the Cloud Tasks emulator'}`,
        relayPerSecond: round(relayRate, 1),
        barePerSecond: round(bareRate, 1),
        ratio: round(relayRate / bareRate, 3),
        benchProcessCpuMsPerMessage: { relay: round(cpu.relay / N, 2), bare: round(cpu.bare / N, 2) },
        firestoreEmulatorCpuMsPerMessage:
          javaPid === null ? null : { relay: round(emulatorCpu.relay / N, 2), bare: round(emulatorCpu.bare / N, 2) },
        halves,
        relayRounds: summary.rounds,
        candidateQueryRoundMs: candidateRoundMs,
        relayTechnicalFailures: summary.technicalFailures,
        relayWarnings: logs.warnings,
        relayErrors: logs.errors,
        relayLogSamples: logs.first,
      },
      cost: {
        correlated: summary.correlated,
        readsPerMessage: per(summary.reads),
        writesPerMessage: per(summary.writes),
        candidateQueryReadsPerMessage: per(summary.candidateReads),
        readsPlusWritesPerMessage: per(summary.reads + summary.writes + summary.candidateReads),
        candidateQueryDocsPerMessage: per(summary.candidates),
        dispatchWritesPerMessage: 0,
        cloudTasksCallsPerMessage: per(dispatched),
        receiverWritesPerMessage: 2,
      },
      latency,
      checks,
      setupSeconds: round(setupSeconds, 1),
      totalSeconds: 0,
      targets: { ratio: '>= 0.8', readsPlusWritesPerMessage: '<= 10', p50Ms: '<= 1000', p99Ms: '<= 3000' },
      ok: checks.every((c) => c.ok) && latencyOk,
    };
    result.totalSeconds = round((Date.now() - began) / 1000, 1);
    if (JSON_OUTPUT) console.log(JSON.stringify(result));
    else printReport(result);
    process.exitCode = result.ok ? 0 : 1;
  } finally {
    for (const stop of cleanup.reverse())
      await stop().catch((err: unknown) => progress(`cleanup: ${errorMessage(err)}`));
    await emulators.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
