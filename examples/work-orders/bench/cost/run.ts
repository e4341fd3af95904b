/**
 * One design of bench:cost on a fresh local stack: N work orders end to end
 * (startProcess → hand-over job → the simulated provider's completion over
 * Pub/Sub push → correlation → invoice job → COMPLETED), every function on
 * its own counting Firestore proxy, Pub/Sub and Cloud Tasks behind counting
 * taps. `system` correlates through the inbox (receiver, fast path, relay);
 * `naive` and `nack` send the completion's push to a baseline process
 * (bench/cost/baseline-server.ts) instead. The scheduled relay and sweepJobs
 * are switched off while the work orders run (their work does not scale
 * with work orders) and measured apart afterwards (system only).
 */
import { Firestore } from '@google-cloud/firestore';
import { PubSub } from '@google-cloud/pubsub';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FunctionTarget } from '../../../../tools/local/control';
import {
  type FirestoreCountingProxy,
  type FirestoreCounts,
  projectIndexConfig,
  startFirestoreCountingProxy,
} from '../../../../tools/faults/firestore-counting-proxy';
import { startGrpcTap } from '../../../../tools/faults/grpc-tap';
import { startLocalStack } from '../../../../tools/local/stack';
import { cpuMs, runPool } from '../pool';
import { PROCESS_KEY } from '../relay-setup';
import { emulatorPid, ownCpuMs } from '../relay-stats';
import { type PubSubCounter, startPubSubCounter, type TopicCounts } from './pubsub-count';
import { TOPICS, WORK_ORDERS_APP, completionSubscription } from '../../local/names';

export type CostDesign = 'system' | 'naive' | 'nack';

export interface CostSettings {
  readonly n: number;
  /** startProcess calls in flight. */
  readonly concurrency: number;
  /** Share of work orders the provider answers at once (their completion may overtake the hand-over). */
  readonly earlyRatio: number;
  readonly timeoutMs: number;
  readonly progress: (line: string) => void;
}

/** Firestore work of one call of a scheduled function. */
export interface PerCall {
  readonly reads: number;
  readonly writes: number;
  readonly deletes: number;
  readonly cpuMs: number;
}

/** What one design did for its N work orders (totals; the report divides). */
export interface DesignCost {
  readonly design: CostDesign;
  readonly n: number;
  readonly completed: number;
  readonly seconds: number;
  /** By function target, and `baseline` for a baseline's handler. */
  readonly firestore: Record<string, FirestoreCounts>;
  /** Documents with `expireAt` at the end, by collection: TTL deletes to come. */
  readonly deferredDeletes: Record<string, number>;
  readonly tasks: { readonly createCalls: number; readonly dispatches: number; readonly deferredDispatches: number };
  /** Requests served, by function (and `baseline`). */
  readonly requests: Record<string, number>;
  readonly pubsub: Record<string, TopicCounts>;
  /** Push deliveries of completions and their billable bytes (max(1,000, the message) each). */
  readonly pushes: { readonly count: number; readonly billableBytes: number };
  /** Pull deliveries to the provider (one per message on its topic) and their billable bytes. */
  readonly pulls: { readonly count: number; readonly billableBytes: number };
  /** CPU ms by process: functions, `baseline`, `firestoreEmulator`, `pubsubEmulator`, `bench` (this process: tasks and storage emulators, taps, provider). */
  readonly cpuMs: Record<string, number>;
  /** The scheduled calls, measured apart (system only): per call. */
  readonly background: { readonly relayInbox: PerCall; readonly sweepJobs: PerCall } | null;
  /** Scheduled relay + sweep calls the run had to make because work orders stopped moving (0 when the fast path did it all). */
  readonly recoveryCalls: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const HOUR = 3_600_000;

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(250);
  }
}

/** Starts the baseline process; resolves with its URL once it listens. */
async function startBaselineProcess(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'baseline-server.ts')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      const m = /READY (\d+)/.exec(c.toString('utf8'));
      if (m?.[1] !== undefined) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`baseline exited ${code}: ${err}`)));
  });
  return { child, url: `http://127.0.0.1:${port}/` };
}

/** Requests each target served, from the tasks' dispatch attempts that reached it. */
function dispatchedRequests(
  log: ReadonlyArray<{ url: string; injected: boolean }>,
  functions: Readonly<Record<string, string>>,
): Record<string, number> {
  const byPort = new Map(Object.entries(functions).map(([t, u]) => [new URL(u).port, t]));
  const out: Record<string, number> = {};
  for (const d of log) {
    const target = byPort.get(new URL(d.url).port);
    if (target !== undefined && !d.injected) out[target] = (out[target] ?? 0) + 1;
  }
  return out;
}

/** Push requests the receiver served: one log line with an `outcome`, or a not-acked line, per request. */
function receiverRequests(logFile: string): number {
  let n = 0;
  for (const line of readFileSync(logFile, 'utf8').split('\n'))
    if (line.includes('"outcome"') || line.includes('not acked')) n += 1;
  return n;
}

export async function runCostDesign(design: CostDesign, s: CostSettings): Promise<DesignCost> {
  const started = Date.now();
  const projectId = `cost-${design}-${Date.now().toString(36)}`;
  const proxies = new Map<string, FirestoreCountingProxy>();
  const closers: Array<() => Promise<void>> = [];
  const config = projectIndexConfig();
  let createCalls = 0;
  let counting = false;
  try {
    // Set inside the stack's start (an object: TypeScript does not follow assignments in callbacks).
    const line: { pubsub: PubSubCounter | null } = { pubsub: null };
    const stack = await startLocalStack({
      projectId,
      app: WORK_ORDERS_APP,
      peers: { earlyRatio: s.earlyRatio },
      // Off while the work orders run: measured apart below (a deployment calls both every minute).
      relayEveryMs: HOUR,
      sweepEveryMs: HOUR,
      firestoreLine: async (target, upstream) => {
        const proxy = await startFirestoreCountingProxy(upstream, config);
        closers.push(() => proxy.close());
        proxies.set(target, proxy);
        return proxy.host;
      },
      pubsubLine: async (upstream) => {
        const p = await startPubSubCounter(upstream);
        line.pubsub = p;
        closers.push(() => p.close());
        return p.host;
      },
      tasksLine: async (upstream) => {
        const tap = await startGrpcTap(upstream, (call) => {
          if (counting && call.method === 'CreateTask') createCalls += 1;
        });
        closers.push(() => tap.close());
        return tap.host;
      },
      progress: (l) => s.progress(`[stack] ${l}`),
    });
    closers.unshift(() => stack.stop());
    const info = await stack.info();
    const admin = new Firestore({
      projectId,
      host: info.firestoreHost,
      ssl: false,
      customHeaders: { Authorization: 'Bearer owner' },
    });
    closers.unshift(() => admin.terminate());

    let baseline: { child: ChildProcess; url: string } | null = null;
    if (design !== 'system') {
      const tasksHost = await (async () => {
        const tap = await startGrpcTap(info.tasksHost, (call) => {
          if (counting && call.method === 'CreateTask') createCalls += 1;
        });
        closers.push(() => tap.close());
        return tap.host;
      })();
      const proxy = await startFirestoreCountingProxy(info.firestoreHost, config);
      closers.push(() => proxy.close());
      proxies.set('baseline', proxy);
      baseline = await startBaselineProcess({
        ...process.env,
        BASELINE_MODE: design,
        GOOGLE_CLOUD_PROJECT: projectId,
        FIRESTORE_EMULATOR_HOST: proxy.host,
        PUBSUB_EMULATOR_HOST: info.pubsubHost,
        INBOX_TASKS_EMULATOR_HOST: tasksHost,
        INBOX_TASKS_SERVICE_ACCOUNT: `inbox-tasks@${projectId}.iam.gserviceaccount.com`,
        INBOX_RUN_JOB_URL: info.functions.runJob,
        INBOX_FIRE_TIMER_URL: info.functions.fireTimer,
        INBOX_PUSH_AUTH: 'disabled',
        METADATA_SERVER_DETECTION: 'none',
      });
      const child = baseline.child;
      closers.unshift(async () => {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      });
      // The completions' push subscription now pushes to the baseline instead of the receiver.
      const client = new PubSub({ projectId, apiEndpoint: info.pubsubHost });
      await client
        .subscription(completionSubscription(info.projectId))
        .modifyPushConfig({ pushEndpoint: baseline.url });
      await client.close();
    }

    const pids: Record<string, number | null> = {
      ...Object.fromEntries(stack.pids().map((p) => [p.target, p.pid])),
      ...(baseline === null ? {} : { baseline: baseline.child.pid ?? null }),
      firestoreEmulator: await emulatorPid('firestore', info.firestoreHost),
      pubsubEmulator: await emulatorPid('pubsub', info.pubsubHost),
    };
    const cpu = async (): Promise<Record<string, number>> => {
      const out: Record<string, number> = { bench: ownCpuMs() };
      for (const [k, pid] of Object.entries(pids)) if (pid !== null) out[k] = await cpuMs(pid).catch(() => 0);
      return out;
    };

    // Measured window: from the first start to the last COMPLETED, nothing of the set-up in it.
    for (const p of proxies.values()) p.reset();
    line.pubsub?.reset();
    counting = true;
    const logStart = stack.tasks.dispatchLog.length;
    const cpuBefore = await cpu();
    const run = Date.now().toString(36);
    let startCalls = 0;
    await runPool(s.n, s.concurrency, async (i) => {
      const workOrderId = `WO-cost-${run}-${i}`;
      const body = JSON.stringify({
        processKey: PROCESS_KEY,
        businessKey: workOrderId,
        variables: { workOrderId, providerScript: 'answer' },
      });
      for (;;) {
        startCalls += 1;
        const response = await fetch(info.functions.startProcess, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }).catch(() => null);
        if (response?.ok === true) return;
        if (response !== null && response.status < 500)
          throw new Error(`startProcess ${response.status}: ${await response.text()}`);
        await sleep(200);
      }
    });
    s.progress(`${design}: ${s.n} work orders started`);
    const completed = async (): Promise<number> =>
      (
        await admin
          .collection('processInstances')
          .where('processKey', '==', PROCESS_KEY)
          .where('status', '==', 'COMPLETED')
          .count()
          .get()
      ).data().count;
    // With the schedules off, a work order the fast path left behind waits for a scheduled call: after 20 s
    // without progress, one relay and one sweep call are made (counted in the per-work-order figures, and reported).
    let recoveryCalls = 0;
    let lastDone = -1;
    let lastProgress = Date.now();
    await until(
      async () => {
        const now = await completed();
        if (now !== lastDone) [lastDone, lastProgress] = [now, Date.now()];
        else if (Date.now() - lastProgress > 20_000) {
          recoveryCalls += 1;
          lastProgress = Date.now();
          for (const target of ['relayInbox', 'sweepJobs'] as const)
            await fetch(info.functions[target], {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: '{}',
            })
              .then((r) => r.arrayBuffer())
              .catch(() => undefined);
        }
        return now >= s.n;
      },
      s.timeoutMs,
      `${design}: ${s.n} work orders COMPLETED`,
    ).catch((err: unknown) => s.progress(String(err)));
    if (recoveryCalls > 0) s.progress(`${design}: ${recoveryCalls} recovery relay+sweep call(s) were needed`);
    // Settled: nothing in flight, every live task is a timer due far later (P14D), the counts still for a second.
    let last = '';
    await until(
      async () => {
        const now = Date.now();
        const busy = stack.tasks.tasks().some((t) => t.inFlight || t.scheduleTime.getTime() < now + 60_000);
        const snapshot = JSON.stringify([...proxies.values()].map((p) => p.counts()));
        const quiet = snapshot === last;
        last = snapshot;
        await sleep(1_000);
        return !busy && quiet;
      },
      30_000,
      'settle',
    ).catch((err: unknown) => s.progress(String(err)));
    const cpuAfter = await cpu();
    counting = false;
    const done = await completed();
    s.progress(`${design}: ${done}/${s.n} COMPLETED in ${Math.round((Date.now() - started) / 1000)} s`);

    const firestore = Object.fromEntries([...proxies].map(([t, p]) => [t, p.counts()]));
    const log = stack.tasks.dispatchLog.slice(logStart);
    const requests: Record<string, number> = { startProcess: startCalls, ...dispatchedRequests(log, info.functions) };
    if (baseline === null) requests.receivePubSubPush = receiverRequests(join(info.logDir, 'receivePubSubPush.log'));
    else requests.baseline = ((await (await fetch(baseline.url)).json()) as { requests: number }).requests;
    const topics = line.pubsub?.counts() ?? {};
    const perMessage = (t: TopicCounts | undefined): number =>
      t === undefined || t.messages === 0 ? 0 : Math.max(1000, t.bytes / t.messages);
    const pushCount = requests.receivePubSubPush ?? requests.baseline ?? 0;
    const providerTopic = topics[TOPICS.provider];

    // TTL deletes to come: the documents that carry expireAt, in the collections with a TTL policy.
    const ttlCollections = (config.fieldOverrides ?? [])
      .filter((o) => 'ttl' in o && (o as { ttl?: boolean }).ttl === true)
      .map((o) => o.collectionGroup);
    const deferredDeletes: Record<string, number> = {};
    for (const c of new Set(ttlCollections))
      deferredDeletes[c] = (await admin.collection(c).select('expireAt').get()).docs.filter(
        (d) => d.get('expireAt') !== undefined && d.get('expireAt') !== null,
      ).length;

    const background = design === 'system' ? await measureBackground(info.functions, proxies, pids, s) : null;
    return {
      design,
      n: s.n,
      completed: done,
      seconds: Math.round((Date.now() - started) / 1000),
      firestore,
      deferredDeletes,
      tasks: { createCalls, dispatches: log.length, deferredDispatches: stack.tasks.tasks().length },
      requests,
      pubsub: topics,
      pushes: { count: pushCount, billableBytes: pushCount * perMessage(topics[TOPICS.completions]) },
      pulls: {
        count: providerTopic?.messages ?? 0,
        billableBytes: (providerTopic?.messages ?? 0) * perMessage(providerTopic),
      },
      cpuMs: Object.fromEntries(Object.entries(cpuAfter).map(([k, v]) => [k, Math.round(v - (cpuBefore[k] ?? 0))])),
      background,
      recoveryCalls,
    };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

/** Three scheduled relay calls and three sweeps with nothing to do but their gauges and sweeps: per call. */
async function measureBackground(
  functions: Readonly<Record<FunctionTarget, string>>,
  proxies: ReadonlyMap<string, FirestoreCountingProxy>,
  pids: Readonly<Record<string, number | null>>,
  s: CostSettings,
): Promise<{ relayInbox: PerCall; sweepJobs: PerCall }> {
  const calls = 3;
  const one = async (target: 'relayInbox' | 'sweepJobs'): Promise<PerCall> => {
    const proxy = proxies.get(target);
    const pid = pids[target] ?? null;
    proxy?.reset();
    const before = pid === null ? 0 : await cpuMs(pid);
    for (let i = 0; i < calls; i++)
      await (
        await fetch(functions[target], { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      ).arrayBuffer();
    await sleep(500);
    const after = pid === null ? 0 : await cpuMs(pid);
    const c = proxy?.counts();
    return {
      reads: (c?.reads ?? 0) / calls,
      writes: (c?.writes ?? 0) / calls,
      deletes: (c?.deletes ?? 0) / calls,
      cpuMs: (after - before) / calls,
    };
  };
  const relayInbox = await one('relayInbox');
  const sweepJobs = await one('sweepJobs');
  s.progress(`background: relay call ${relayInbox.reads} R ${relayInbox.writes} W; sweep ${sweepJobs.reads} R`);
  return { relayInbox, sweepJobs };
}
