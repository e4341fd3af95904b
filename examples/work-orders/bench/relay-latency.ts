/**
 * Part 3 of `npm run bench:relay`: publish-to-DONE latency through the real
 * path. Pub/Sub emulator push subscription → receivePubSubPush (Functions
 * Framework CLI) → fast-path task on the Cloud Tasks emulator (queue
 * inbox-relay) → relayInbox (Functions Framework CLI) → inbox DONE; the
 * invoice jobs go through process-jobs to runJob, so every order ends
 * COMPLETED with one invoice. A simulated Cloud Scheduler POSTs {} to
 * relayInbox every minute, as a deployment's would.
 */
import { PubSub } from '@google-cloud/pubsub';
import { availableParallelism } from 'node:os';
import { loadConfig } from '../../../functions/src/config';
import { COLLECTIONS } from '../../../functions/src/engine/store/collections';
import { createFirestore } from '../../../functions/src/firestore';
import { type CloudTasksEmulator, emulatorClient } from '@inbox/cloud-tasks-emulator';
import { freePort } from '../../../tools/emulators/ports';
import { serveFunction, type ServedFunction } from '../../../tools/local/serve-function';
import type { Engine } from '../../../functions/src/engine/engine';
import { buildBacklog, completionId } from './relay-setup';
import { type CapacityResult, findCapacity } from './relay-capacity';
import { awaitDone, countWhere, cpuSnapshot, publishPaced, waitUntil } from './relay-observe';
import { emulatorPid, percentile, round } from './relay-stats';
import { INVOICES, TOPICS, TOPOLOGY } from '../local/names';

export interface LatencyOptions {
  readonly projectId: string;
  readonly firestoreHost: string;
  readonly pubsubHost: string;
  /** The Cloud Tasks emulator (in this process: its dispatch log times the fast path). */
  readonly tasks: CloudTasksEmulator;
  /** When the emulator created each task (short task id → ms since the epoch). */
  readonly taskCreated: ReadonlyMap<string, number>;
  readonly engine: Engine;
  readonly messages: number;
  readonly warmup: number;
  /** Messages per second; null: 80 % of the capacity the search finds first (relay-capacity.ts). */
  readonly rate: number | null;
  /** The capacity search's window per step, s, and its first rate. */
  readonly capacityWindowSeconds: number;
  readonly capacityStartRate: number;
  readonly setupConcurrency: number;
  /** How long to wait for the last documents after the last publish, ms. */
  readonly waitMs: number;
  readonly progress: (line: string) => void;
}

export interface LatencyResult {
  /** The capacity search, when the rate was not given; the latency run's rate is 80 % of what it found. */
  capacity: CapacityResult | null;
  messages: number;
  /** Work orders of the run: the measured ones and the warm-up. */
  orders: number;
  rate: number;
  publishSeconds: number;
  done: number;
  missing: number;
  notDone: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Publish call → receiver's receivedAt, and receivedAt → relay's processedAt (p50 / p99). */
  publishToStoredP50Ms: number;
  publishToStoredP99Ms: number;
  storedToDoneP50Ms: number;
  storedToDoneP99Ms: number;
  /** The fast path, from the Cloud Tasks emulator's dispatch log: stored → task dispatched, dispatched → relay transaction began, whole relayInbox call (p50 / p99). */
  fastPath: Record<'storedToDispatch' | 'dispatchToTransaction' | 'relayCall', { p50Ms: number; p99Ms: number }> & {
    tasks: number;
    retriedOrFailed: number;
  };
  /**
   * The same path hop by hop (p50 / p99): receipt (the receiver's receivedAt) → the fast-path task created (the
   * receiver's batch committed and its CreateTask arrived; the 2xx follows), created → dispatched (the emulator),
   * dispatched → the relay transaction began (HTTP and relayInbox's work before it), and began → relayInbox
   * answered (the transaction, the invoice job's task, the answer).
   */
  hops: Record<
    'receiptToTaskCreated' | 'createdToDispatched' | 'dispatchedToTransaction' | 'transactionToAnswer',
    { p50Ms: number; p99Ms: number }
  >;
  instancesCompleted: number;
  invoices: number;
  invoiceJobs: number;
  functionWarnings: number;
  functionErrors: number;
  /** Where the CPU went from the first measured publish until all were DONE: % of one core per process, % of all cores for the machine. */
  cpu: {
    wallSeconds: number;
    machineBusyPercent: number;
    corePercent: Record<string, number>;
    msPerMessage: Record<string, number>;
    /** All of the above per message, and the rate the machine's cores could sustain at that cost. */
    totalMsPerMessage: number;
    /** The three functions' processes together, and the Firestore and Pub/Sub emulators' JVMs together, ms per message. */
    functionsMsPerMessage: number;
    emulatorsMsPerMessage: number;
    sustainablePerSecond: number;
  };
  /** Rates over the measurement: stored by the receiver, DONE by the relay (per second, from the first publish to the last such time). */
  storedPerSecond: number;
  donePerSecond: number;
  /** p50 latency of the first and the last tenth of the messages published: a growing figure means a growing queue. */
  firstTenthP50Ms: number;
  lastTenthP50Ms: number;
  /** The first few WARNING/ERROR lines of the served functions. */
  functionLogSamples: string[];
}

export async function measureLatency(o: LatencyOptions): Promise<LatencyResult> {
  const db = createFirestore(o.projectId);
  const pubsub = new PubSub({ projectId: o.projectId });
  const served: ServedFunction[] = [];
  let scheduler: NodeJS.Timeout | undefined;
  try {
    const warm = Array.from({ length: o.warmup }, (_, i) => `WO-warm-${i}`);
    const measured = Array.from({ length: o.messages }, (_, i) => `WO-lat-${i}`);
    /** Every work order of the run (warm-up, capacity steps, measured), each expected COMPLETED once. */
    const orders: string[] = [];
    const prepare = async (ids: readonly string[], what: string): Promise<void> => {
      const setupStart = Date.now();
      await buildBacklog(db, o.engine, ids, { concurrency: o.setupConcurrency, store: false, shards: 16 });
      orders.push(...ids);
      o.progress(
        `latency: ${ids.length} waiting work orders (${what}) in ${((Date.now() - setupStart) / 1000).toFixed(1)} s`,
      );
    };
    await prepare(warm, 'warm-up');

    const runJobUrl = `http://127.0.0.1:${await freePort()}/`;
    const common = {
      GOOGLE_CLOUD_PROJECT: o.projectId,
      INBOX_PUSH_AUTH: 'disabled',
      FIRESTORE_EMULATOR_HOST: o.firestoreHost,
      PUBSUB_EMULATOR_HOST: o.pubsubHost,
      INBOX_TASKS_EMULATOR_HOST: o.tasks.host,
      INBOX_RUN_JOB_URL: runJobUrl,
      // No model of the bench sets a timer; the setting is required of every function that moves tokens.
      INBOX_FIRE_TIMER_URL: 'http://127.0.0.1:9/',
    };
    // BENCH_PROFILE=DIR writes a CPU profile of each function process there.
    const nodeArgs =
      process.env.BENCH_PROFILE === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`];
    served.push(
      await serveFunction({ target: 'runJob', port: Number(new URL(runJobUrl).port), env: common, nodeArgs }),
    );
    const relay = await serveFunction({ target: 'relayInbox', env: common, nodeArgs });
    served.push(relay);
    const receiver = await serveFunction({
      target: 'receivePubSubPush',
      env: { ...common, INBOX_RELAY_URL: relay.url },
      nodeArgs,
    });
    served.push(receiver);
    const pids = {
      ...Object.fromEntries(served.map((f) => [f.target, f.pid])),
      firestoreEmulator: await emulatorPid('firestore', o.firestoreHost),
      pubsubEmulator: await emulatorPid('pubsub', o.pubsubHost),
    };

    const config = loadConfig({ ...common, INBOX_RELAY_URL: relay.url });
    const admin = emulatorClient(o.tasks.host);
    try {
      const parent = `projects/${o.projectId}/locations/${config.tasks.location}`;
      for (const queue of [config.relay.queue, config.tasks.queue])
        await admin.createQueue({ parent, queue: { name: `${parent}/queues/${queue}` } });
    } finally {
      await admin.close();
    }
    await pubsub.createTopic(TOPICS.provider);
    const [topic] = await pubsub.createTopic(TOPICS.completions);
    await topic.createSubscription(TOPOLOGY.inbound.find((t) => t.topic === TOPICS.completions)?.subscription ?? '', {
      pushConfig: { pushEndpoint: receiver.url },
      ackDeadlineSeconds: 10,
    });
    // Cloud Scheduler's call, once a minute: picks up anything the fast path left OPEN.
    scheduler = setInterval(
      () =>
        void fetch(relay.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(
          () => undefined,
        ),
      60_000,
    );

    // Finished work orders, from the dispatch log in this process: an invoice job's task answered 2xx.
    const jobsQueue = `projects/${o.projectId}/locations/${config.tasks.location}/queues/${config.tasks.queue}`;
    const finished = (): number =>
      o.tasks.dispatchLog.filter((r) => r.queue === jobsQueue && r.outcome === 'completed').length;
    const untilFinished = async (count: number, deadline: number): Promise<void> => {
      while (finished() < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    };

    // Warm-up: cold starts (lazy clients, the engine's models) are not the steady state.
    await publishPaced(pubsub, topic.name, warm, o.rate ?? o.capacityStartRate);
    await untilFinished(warm.length, Date.now() + o.waitMs);
    o.progress(`latency: warm-up ${finished()}/${warm.length} work orders finished`);

    const capacity =
      o.rate !== null
        ? null
        : await findCapacity({
            prepare: async (index, count) => {
              const ids = Array.from({ length: count }, (_, i) => `WO-cap${index}-${i}`);
              await prepare(ids, `capacity step ${index + 1}`);
              return ids;
            },
            publish: (ids, rate) => publishPaced(pubsub, topic.name, ids, rate),
            finished,
            windowSeconds: o.capacityWindowSeconds,
            startRate: o.capacityStartRate,
            maxSteps: 8,
            drainLimitMs: o.waitMs,
            progress: o.progress,
          });
    // Below saturation: 80 % of the highest sustained rate (at least 1/s).
    const rate = o.rate ?? Math.max(1, Math.round((capacity?.sustainedPerSecond ?? 0) * 8) / 10);
    if (capacity !== null)
      o.progress(
        `capacity: ${capacity.sustainedPerSecond}/s sustained${capacity.failedPerSecond === null ? '' : `, ${capacity.failedPerSecond}/s not`}; latency at 80 %: ${rate}/s`,
      );
    await prepare(measured, 'measured');

    const base = finished();
    const cpuBefore = await cpuSnapshot(pids);
    const sentAt = await publishPaced(pubsub, topic.name, measured, rate);
    const lastPublish = Date.now();
    o.progress(
      `latency: published ${measured.length} at ${rate}/s in ${((lastPublish - (sentAt[0] ?? lastPublish)) / 1000).toFixed(1)} s`,
    );
    // Waits on the dispatch log, not by polling Firestore: the observer must not load the emulator it measures.
    await untilFinished(base + measured.length, lastPublish + o.waitMs);
    const cpuAfter = await cpuSnapshot(pids);
    // One read of the measured documents once their work orders are finished (a second pass only for stragglers).
    const seen = await awaitDone(db, measured, Date.now() + (finished() >= base + measured.length ? 0 : 5_000));
    const wallMs = cpuAfter.at - cpuBefore.at;
    const used = Object.entries(cpuAfter.ms).map(([k, v]) => [k, v - (cpuBefore.ms[k] ?? 0)] as const);
    const corePercent = Object.fromEntries(used.map(([k, v]) => [k, round((v / wallMs) * 100)]));
    const msPerMessage = Object.fromEntries(used.map(([k, v]) => [k, round(v / measured.length, 1)]));
    const totalMsPerMessage = used.reduce((sum, [, v]) => sum + v, 0) / measured.length;
    const sumOf = (names: readonly string[]): number =>
      used.filter(([k]) => names.includes(k)).reduce((sum, [, v]) => sum + v, 0) / measured.length;

    const tenth = Math.max(1, Math.floor(measured.length / 10));
    const tenthP50 = (ids: readonly string[], sent: readonly number[]): number => {
      const latencies = ids.flatMap((w, i) => {
        const d = seen.get(w);
        return typeof d === 'object' ? [d.processedAt - (sent[i] as number)] : [];
      });
      return percentile(
        latencies.sort((a, b) => a - b),
        50,
      );
    };
    const firstSent = sentAt[0] ?? lastPublish;
    const doneTimes = [...seen.values()].filter((v) => typeof v === 'object');
    const total: number[] = [];
    const toStored: number[] = [];
    const toDone: number[] = [];
    const toDispatch: number[] = [];
    const toTransaction: number[] = [];
    const relayCall: number[] = [];
    const toCreated: number[] = [];
    const createdToDispatched: number[] = [];
    const transactionToAnswer: number[] = [];
    const relayQueue = `projects/${o.projectId}/locations/${config.tasks.location}/queues/${config.relay.queue}`;
    const dispatches = new Map(
      o.tasks.dispatchLog
        .filter((r) => r.queue === relayQueue && r.attempt === 1)
        .map((r) => [r.task.slice(r.task.lastIndexOf('/') + 1), r]),
    );
    measured.forEach((w, i) => {
      const s = seen.get(w);
      if (typeof s !== 'object') return;
      const sent = sentAt[i] as number;
      total.push(s.processedAt - sent);
      toStored.push(s.receivedAt - sent);
      toDone.push(s.processedAt - s.receivedAt);
      const d = dispatches.get(completionId(w));
      if (d === undefined) return;
      toDispatch.push(d.time.getTime() - s.receivedAt);
      toTransaction.push(s.processedAt - d.time.getTime());
      relayCall.push(d.durationMs);
      transactionToAnswer.push(d.time.getTime() + d.durationMs - s.processedAt);
      const created = o.taskCreated.get(completionId(w));
      if (created === undefined) return;
      toCreated.push(created - s.receivedAt);
      createdToDispatched.push(d.time.getTime() - created);
    });
    for (const list of [
      total,
      toStored,
      toDone,
      toDispatch,
      toTransaction,
      relayCall,
      toCreated,
      createdToDispatched,
      transactionToAnswer,
    ])
      list.sort((a, b) => a - b);
    const p50p99 = (list: readonly number[]): { p50Ms: number; p99Ms: number } => ({
      p50Ms: percentile(list, 50),
      p99Ms: percentile(list, 99),
    });
    const done = total.length;
    const notDone = [...seen.values()].filter((v) => v === 'OPEN').length;

    // Every order invoiced once: wait for runJob to work through the invoice jobs.
    await waitUntil(
      async () => (await countWhere(db, COLLECTIONS.instances, 'status', 'COMPLETED')) >= orders.length,
      Date.now() + o.waitMs,
    );
    // serveFunction's readiness probe is a GET, which the functions answer 405 (logged as a WARNING).
    const logs = served.flatMap((f) => f.logs).filter((l) => l.status !== 405);
    return {
      capacity,
      messages: measured.length,
      orders: orders.length,
      rate,
      publishSeconds: round((lastPublish - (sentAt[0] ?? lastPublish)) / 1000, 1),
      done,
      missing: measured.length - done - notDone,
      notDone,
      p50Ms: percentile(total, 50),
      p95Ms: percentile(total, 95),
      p99Ms: percentile(total, 99),
      maxMs: percentile(total, 100),
      publishToStoredP50Ms: percentile(toStored, 50),
      publishToStoredP99Ms: percentile(toStored, 99),
      storedToDoneP50Ms: percentile(toDone, 50),
      storedToDoneP99Ms: percentile(toDone, 99),
      fastPath: {
        storedToDispatch: p50p99(toDispatch),
        dispatchToTransaction: p50p99(toTransaction),
        relayCall: p50p99(relayCall),
        tasks: dispatches.size,
        retriedOrFailed: o.tasks.dispatchLog.filter(
          (r) => r.queue === relayQueue && (r.attempt > 1 || r.status !== 200),
        ).length,
      },
      hops: {
        receiptToTaskCreated: p50p99(toCreated),
        createdToDispatched: p50p99(createdToDispatched),
        dispatchedToTransaction: p50p99(toTransaction),
        transactionToAnswer: p50p99(transactionToAnswer),
      },
      instancesCompleted: await countWhere(db, COLLECTIONS.instances, 'status', 'COMPLETED'),
      invoices: (await db.collection(INVOICES).count().get()).data().count,
      // No jobs/ documents since the instance-document layout: the invoice jobs Cloud Tasks ran to a 2xx.
      invoiceJobs: finished(),
      functionWarnings: logs.filter((l) => l.severity === 'WARNING').length,
      functionErrors: logs.filter((l) => l.severity === 'ERROR' || l.severity === 'CRITICAL').length,
      cpu: {
        wallSeconds: round(wallMs / 1000, 1),
        machineBusyPercent: round(
          ((cpuAfter.machine.busy - cpuBefore.machine.busy) / (cpuAfter.machine.total - cpuBefore.machine.total)) * 100,
        ),
        corePercent,
        msPerMessage,
        totalMsPerMessage: round(totalMsPerMessage, 1),
        functionsMsPerMessage: round(sumOf(['receivePubSubPush', 'relayInbox', 'runJob']), 1),
        emulatorsMsPerMessage: round(sumOf(['firestoreEmulator', 'pubsubEmulator']), 1),
        sustainablePerSecond: round((availableParallelism() * 1000) / totalMsPerMessage, 1),
      },
      storedPerSecond: round(
        doneTimes.length / ((Math.max(...doneTimes.map((d) => d.receivedAt)) - firstSent) / 1000),
        1,
      ),
      donePerSecond: round(
        doneTimes.length / ((Math.max(...doneTimes.map((d) => d.processedAt)) - firstSent) / 1000),
        1,
      ),
      firstTenthP50Ms: tenthP50(measured.slice(0, tenth), sentAt.slice(0, tenth)),
      lastTenthP50Ms: tenthP50(measured.slice(-tenth), sentAt.slice(-tenth)),
      functionLogSamples: logs
        .filter((l) => l.severity !== 'INFO' && l.severity !== 'DEBUG')
        .slice(0, 3)
        .map((l) => JSON.stringify(l).slice(0, 400)),
    };
  } finally {
    clearInterval(scheduler);
    await Promise.all(served.map((f) => f.stop()));
    await pubsub.close();
    await db.terminate();
  }
}
