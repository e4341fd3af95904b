/**
 * `npm run bench:trace-cost`: what tracing costs the receiver, in one run.
 *
 * 1. Per message: three receivePubSubPush processes (Functions Framework CLI,
 *    auth off, real Firestore emulator) with tracing off
 *    (INBOX_TRACE_EXPORTER=none), on with every message sampled (file
 *    exporter, INBOX_TRACE_SAMPLE_RATIO=1: the worst case, a span written per
 *    span end) and on with the default ratio 0.1. Loopback pushes at
 *    concurrency 32 in mirrored rounds (off, on, 0.1, 0.1, on, off), so drift
 *    on a shared machine hits all alike, repeated --rounds times; CPU of each receiver from /proc.
 *    The bench's messages carry no trace context, so each is a new trace and
 *    the ratio decides; a publisher's sampled context would always be followed.
 * 2. Cold start: spawn of the Functions Framework CLI to its first answer,
 *    tracing none against file (ratio 1), interleaved, median of several.
 * 3. Whether `cloud-trace` loads Google's exporter at start-up: the module
 *    list of a fresh process importing dist/index.js (nothing is exported, so
 *    Google is never contacted).
 *
 * Flags: --n=2000 (messages per side) --rounds=3 (mirrored rounds) --concurrency=32 --runs=9 (cold starts per side) --json
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveFunction, REPO_ROOT, type ServedFunction } from '../../../tools/local/serve-function';
import { useEmulators } from '../../../tools/local/use-emulators';
import { argNumber, cpuMs, postJson, runPool } from './pool';
import { firstAnswer } from './first-answer';

const N = argNumber('n', 2_000);
const CONCURRENCY = argNumber('concurrency', 32);
const RUNS = argNumber('runs', 9);
const ROUNDS = argNumber('rounds', 3);
const SUBSCRIPTION = 'projects/bench/subscriptions/work-order-completed-push';
const TARGET = 'receivePubSubPush';
const EXPORTER_PACKAGE = '@google-cloud/opentelemetry-cloud-trace-exporter';

type Side = 'off' | 'on' | 'sampled';
const SIDES: readonly Side[] = ['off', 'on', 'sampled'];

function envelopeFor(side: string, i: number): string {
  const payload = {
    workOrderId: `WO-${side}-${i}`,
    completedItems: i % 97,
    completionTimestamp: '2026-11-29T10:00:00Z',
    eventId: `evt-${side}-${i}`,
  };
  return JSON.stringify({
    message: {
      data: Buffer.from(JSON.stringify(payload)).toString('base64'),
      attributes: { eventType: 'WorkOrderCompleted' },
      messageId: `${side}-${i}`,
      publishTime: new Date().toISOString(),
    },
    subscription: SUBSCRIPTION,
  });
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

const spanLines = (path: string): number =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '').length
    : 0;

/** The tracing environment of each side; `file` is where the side's spans go. */
function traceEnv(side: Side, file: string): Record<string, string> {
  if (side === 'off') return { INBOX_TRACE_EXPORTER: 'none' };
  return { INBOX_TRACE_EXPORTER: `file:${file}`, INBOX_TRACE_SAMPLE_RATIO: side === 'on' ? '1' : '0.1' };
}

/** Part 1: CPU ms per message and msg/s of each side, mirrored rounds. */
async function perMessage(
  dir: string,
): Promise<Record<Side, { cpuMsPerMessage: number; perSecond: number; spansPerMessage: number }>> {
  const run = Date.now().toString(36);
  const files: Record<Side, string> = {
    off: join(dir, 'off.jsonl'),
    on: join(dir, 'on.jsonl'),
    sampled: join(dir, 'sampled.jsonl'),
  };
  const served = {} as Record<Side, ServedFunction>;
  for (const side of SIDES) {
    served[side] = await serveFunction({
      target: TARGET,
      env: {
        GOOGLE_CLOUD_PROJECT: `bench-trace-${side}-${run}`,
        INBOX_PUSH_AUTH: 'disabled',
        ...traceEnv(side, files[side]),
      },
      logs: 'discard',
    });
  }
  // A keep-alive agent per segment: a socket left idle while the other sides run can be closed by the
  // server (keep-alive timeout) just as it is reused, which the client sees as a hang-up.
  let agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const freshAgent = (): void => {
    agent.destroy();
    agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  };
  try {
    const post = async (side: Side, tag: string, i: number): Promise<void> => {
      const { status } = await postJson(served[side].url, agent, envelopeFor(`${side}-${tag}`, i));
      if (status !== 200) throw new Error(`${side} receiver answered ${status}`);
    };
    for (const side of SIDES) {
      freshAgent();
      await runPool(200, CONCURRENCY, (i) => post(side, 'warm', i));
    }
    const warmSpans: Record<Side, number> = {
      off: spanLines(files.off),
      on: spanLines(files.on),
      sampled: spanLines(files.sampled),
    };
    // ROUNDS mirrored rounds, each side's N messages split evenly over them: linear drift cancels within a round.
    const order: Side[] = Array.from({ length: ROUNDS }, (): Side[] => [
      'off',
      'on',
      'sampled',
      'sampled',
      'on',
      'off',
    ]).flat();
    const chunks = order.length / SIDES.length;
    const seen: Record<Side, number> = { off: 0, on: 0, sampled: 0 };
    const elapsed: Record<Side, number> = { off: 0, on: 0, sampled: 0 };
    const cpu: Record<Side, number> = { off: 0, on: 0, sampled: 0 };
    for (const side of order) {
      const from = Math.floor((seen[side] * N) / chunks);
      seen[side] += 1;
      freshAgent();
      const to = Math.floor((seen[side] * N) / chunks);
      const cpuBefore = await cpuMs(served[side].pid);
      const started = process.hrtime.bigint();
      await runPool(to - from, CONCURRENCY, (k) => post(side, 'm', from + k));
      elapsed[side] += Number(process.hrtime.bigint() - started) / 1e9;
      cpu[side] += (await cpuMs(served[side].pid)) - cpuBefore;
    }
    const out = {} as Record<Side, { cpuMsPerMessage: number; perSecond: number; spansPerMessage: number }>;
    for (const side of SIDES) {
      out[side] = {
        cpuMsPerMessage: cpu[side] / N,
        perSecond: N / elapsed[side],
        spansPerMessage: (spanLines(files[side]) - warmSpans[side]) / N,
      };
    }
    return out;
  } finally {
    agent.destroy();
    await Promise.all(SIDES.map((s) => served[s].stop()));
  }
}

const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '',
  GOOGLE_CLOUD_PROJECT: 'bench-trace-cold',
  INBOX_PUSH_AUTH: 'disabled',
  FUNCTION_TARGET: TARGET,
  METADATA_SERVER_DETECTION: 'none',
  ...extra,
});

/** Spawn of the Functions Framework CLI to its first HTTP answer (any status), in ms; as bench/cold-start.ts measures. */
const firstAnswerWith = (env: NodeJS.ProcessEnv): Promise<number> => firstAnswer(REPO_ROOT, REPO_ROOT, TARGET, env);

/** Part 2: cold start, tracing none against file with ratio 1, interleaved (ABBA). */
async function coldStart(dir: string): Promise<{ offMs: number; onMs: number }> {
  const env: Record<'off' | 'on', NodeJS.ProcessEnv> = {
    off: childEnv(traceEnv('off', '')),
    on: childEnv(traceEnv('on', join(dir, 'cold.jsonl'))),
  };
  const samples: Record<'off' | 'on', number[]> = { off: [], on: [] };
  await firstAnswerWith(env.off); // warm the file system cache once
  for (let round = 0; round < RUNS; round++) {
    const order: Array<'off' | 'on'> = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
    for (const side of order) samples[side].push(await firstAnswerWith(env[side]));
  }
  return { offMs: median(samples.off), onMs: median(samples.on) };
}

/** Part 3: is Google's exporter (or its gRPC client) in the module list after importing the entry with `cloud-trace`? */
function cloudTraceAtStartup(): { exporterLoaded: boolean; sdkLoaded: boolean } {
  const script = `require(${JSON.stringify(join(REPO_ROOT, 'dist', 'index.js'))});
const loaded = Object.keys(require.cache);
const has = (p) => loaded.some((f) => f.includes('/node_modules/' + p + '/'));
process.stdout.write(JSON.stringify({ exporterLoaded: has(${JSON.stringify(EXPORTER_PACKAGE)}) || has('@grpc/grpc-js'), sdkLoaded: has('@opentelemetry/sdk-trace-base') }));`;
  const out = execFileSync(process.execPath, ['-e', script], {
    cwd: REPO_ROOT,
    env: childEnv({ INBOX_TRACE_EXPORTER: 'cloud-trace', INBOX_TRACE_SAMPLE_RATIO: '1' }),
    encoding: 'utf8',
  });
  return JSON.parse(out) as { exporterLoaded: boolean; sdkLoaded: boolean };
}

async function main(): Promise<void> {
  const begun = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'bench-trace-cost-'));
  const emulators = await useEmulators();
  let load: Awaited<ReturnType<typeof perMessage>>;
  try {
    load = await perMessage(dir);
  } finally {
    await emulators.stop();
  }
  const cold = await coldStart(dir);
  const startup = cloudTraceAtStartup();
  const r2 = (v: number): number => Math.round(v * 100) / 100;
  const result = {
    at: new Date().toISOString(),
    seconds: Math.round((performance.now() - begun) / 1000),
    messagesPerSide: N,
    concurrency: CONCURRENCY,
    receiverCpuMsPerMessage: {
      off: r2(load.off.cpuMsPerMessage),
      on: r2(load.on.cpuMsPerMessage),
      sampled01: r2(load.sampled.cpuMsPerMessage),
    },
    cpuRatio: {
      on: r2(load.on.cpuMsPerMessage / load.off.cpuMsPerMessage),
      sampled01: r2(load.sampled.cpuMsPerMessage / load.off.cpuMsPerMessage),
    },
    perSecond: {
      off: Math.round(load.off.perSecond),
      on: Math.round(load.on.perSecond),
      sampled01: Math.round(load.sampled.perSecond),
    },
    rateRatio: {
      on: r2(load.on.perSecond / load.off.perSecond),
      sampled01: r2(load.sampled.perSecond / load.off.perSecond),
    },
    spansPerMessage: {
      off: r2(load.off.spansPerMessage),
      on: r2(load.on.spansPerMessage),
      sampled01: r2(load.sampled.spansPerMessage),
    },
    coldStart: {
      runs: RUNS,
      offMsMedian: Math.round(cold.offMs),
      onMsMedian: Math.round(cold.onMs),
      ratio: r2(cold.onMs / cold.offMs),
    },
    cloudTraceAtStartup: startup,
  };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  const c = result.receiverCpuMsPerMessage;
  console.log(
    `receiver, ${N} messages per side, concurrency ${CONCURRENCY}, ${ROUNDS} mirrored rounds (off, on, 0.1, 0.1, on, off):`,
  );
  console.log(
    `  CPU per message: off ${c.off} ms   on (ratio 1) ${c.on} ms   ratio 0.1 ${c.sampled01} ms   ratio on/off ${result.cpuRatio.on}   0.1/off ${result.cpuRatio.sampled01}`,
  );
  console.log(
    `  msg/s: off ${result.perSecond.off}   on ${result.perSecond.on}   ratio 0.1 ${result.perSecond.sampled01}   ratio on/off ${result.rateRatio.on}   0.1/off ${result.rateRatio.sampled01}`,
  );
  console.log(
    `  spans written per message: off ${result.spansPerMessage.off}   on ${result.spansPerMessage.on}   ratio 0.1 ${result.spansPerMessage.sampled01}`,
  );
  console.log(
    `cold start (spawn to first answer), median of ${RUNS}, interleaved: none ${result.coldStart.offMsMedian} ms   file, ratio 1 ${result.coldStart.onMsMedian} ms   ratio ${result.coldStart.ratio}`,
  );
  console.log(
    `cloud-trace at start-up: OpenTelemetry SDK ${startup.sdkLoaded ? 'loaded' : 'not loaded'}, ${EXPORTER_PACKAGE} (and gRPC) ${startup.exporterLoaded ? 'LOADED at start-up' : 'not loaded: it loads on the first export'}`,
  );
  console.log(`${result.seconds} s in all; spans in ${dir}`);
  process.exitCode =
    result.spansPerMessage.on > 0 && result.spansPerMessage.off === 0 && !startup.exporterLoaded ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
