/**
 * `npm run bench:receive`: what does the receiver cost beyond its one write?
 *
 * Pushes N envelopes (default 5,000) over loopback HTTP at concurrency 32
 * into receivePubSubPush (Functions Framework CLI, auth off, real Firestore
 * emulator) and, in the same run, stores the same number of equivalent
 * messages straight through the Firestore client with the receiver's own
 * write (inbox document + lane entry in one batch), and through a bare
 * Functions Framework function doing one create(). The two alternate
 * in ABBA rounds so drift on a shared machine hits both. Prints both rates,
 * the ratio receiver/direct (target >= 0.8), the receiver's peak RSS
 * (target <= 200 MB) and a check that no document is missing or doubled.
 *
 * Flags: --n=5000 --concurrency=32 --json
 */
import type { Firestore } from '@google-cloud/firestore';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { createFirestore } from '../../../functions/src/firestore';
import { INBOX } from '../../../functions/src/inbox/document';
import { storeMessage } from '../../../functions/src/inbox/store-message';
import { parsePushEnvelope } from '../../../functions/src/receiver/envelope';
import { interpretMessage } from '../../../functions/src/receiver/interpret';
import { WORK_ORDER_REGISTRY } from '../local/names';
import { serveFunction } from '../../../tools/local/serve-function';
import { useEmulators } from '../../../tools/local/use-emulators';
import { argNumber, cpuMs, currentRss, peakRss, postJson, runPool } from './pool';

const N = argNumber('n', 5_000);
const CONCURRENCY = argNumber('concurrency', 32);
const JSON_OUTPUT = process.argv.includes('--json');
const SUBSCRIPTION = 'projects/bench/subscriptions/work-order-completed-push';

function envelopeFor(side: string, i: number): Record<string, unknown> {
  const payload = {
    workOrderId: `WO-${side}-${i}`,
    completedItems: i % 97,
    completionTimestamp: '2026-11-29T10:00:00Z',
    eventId: `evt-${side}-${i}`,
  };
  return {
    message: {
      data: Buffer.from(JSON.stringify(payload)).toString('base64'),
      attributes: { eventType: 'WorkOrderCompleted' },
      messageId: `${side}-${i}`,
      publishTime: new Date().toISOString(),
    },
    subscription: SUBSCRIPTION,
  };
}

/** Expected inbox id of message i (the same pure code the receiver runs). */
function idFor(side: string, i: number): string {
  const parsed = parsePushEnvelope(envelopeFor(side, i));
  if (!parsed.ok) throw new Error(parsed.error);
  return interpretMessage(parsed.envelope, WORK_ORDER_REGISTRY, { referenceBuckets: [] }).id;
}

async function verify(db: Firestore, side: string, count: number): Promise<{ missing: number; extra: number }> {
  const total = (await db.collection(INBOX).count().get()).data().count;
  let missing = 0;
  for (let start = 0; start < count; start += 500) {
    const refs = Array.from({ length: Math.min(500, count - start) }, (_, k) =>
      db.collection(INBOX).doc(idFor(side, start + k)),
    );
    const snaps = await db.getAll(...refs);
    missing += snaps.filter((s) => !s.exists).length;
  }
  return { missing, extra: total - (count - missing) };
}

async function main(): Promise<void> {
  const emulators = await useEmulators();
  const run = Date.now().toString(36);
  const receiverProject = `bench-receiver-${run}`;
  // The same client settings the functions use.
  const directDb = createFirestore(`bench-direct-${run}`);
  const receiver = await serveFunction({
    target: 'receivePubSubPush',
    env: { GOOGLE_CLOUD_PROJECT: receiverProject, INBOX_PUSH_AUTH: 'disabled' },
    // The receiver still writes its logs; only this process skips reading them.
    logs: 'discard',
    // BENCH_PROFILE=DIR writes a CPU profile of the receiver process there.
    // BENCH_NODE_ARGS adds node flags to the receiver (to try heap settings).
    nodeArgs: [
      ...(process.env.BENCH_PROFILE === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]),
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
    ],
  });
  const bareProject = `bench-bare-${run}`;
  const bare = await serveFunction({
    target: 'bareCreate',
    source: join(__dirname, 'fixtures'),
    env: { GOOGLE_CLOUD_PROJECT: bareProject },
    logs: 'discard',
  });
  const receiverDb = createFirestore(receiverProject);
  // A lean keep-alive client: on two cores the load generator competes with the receiver for CPU.
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    const post = async (url: string, side: string, i: number): Promise<void> => {
      const { status } = await postJson(url, agent, JSON.stringify(envelopeFor(side, i)));
      if (status !== 200) throw new Error(`receiver answered ${status}`);
    };
    const write = async (side: string, i: number): Promise<void> => {
      const parsed = parsePushEnvelope(envelopeFor(side, i));
      if (!parsed.ok) throw new Error(parsed.error);
      const draft = interpretMessage(parsed.envelope, WORK_ORDER_REGISTRY, { referenceBuckets: [] });
      if (draft.kind !== 'valid') throw new Error('bench message is invalid');
      // The receiver's own write (inbox document + lane entry, one batch), without HTTP and the framework.
      await storeMessage(directDb, draft, { envelope: parsed.envelope, now: new Date(), shards: 16, offload: null });
    };
    type Side = 'receiver' | 'bare' | 'direct';
    const send: Record<Side, (i: number) => Promise<void>> = {
      receiver: (i) => post(receiver.url, 'r', i),
      bare: (i) => post(bare.url, 'b', i),
      direct: (i) => write('d', i),
    };
    // CPU spent per message: by the serving process for the two HTTP sides, by this process for the direct client.
    const cpuNow = async (side: Side): Promise<number> => {
      if (side === 'direct') {
        const used = process.cpuUsage();
        return (used.user + used.system) / 1000;
      }
      return cpuMs(side === 'receiver' ? receiver.pid : bare.pid);
    };
    // Warm every path (connections, JIT, the emulator's caches).
    await runPool(200, CONCURRENCY, (i) => post(receiver.url, 'warm', i));
    await runPool(200, CONCURRENCY, (i) => post(bare.url, 'warm', i));
    await runPool(200, CONCURRENCY, (i) => write('warm', i));

    const half = Math.floor(N / 2);
    // Mirrored order, so drift on a shared machine hits every side alike.
    const order: Side[] = ['direct', 'bare', 'receiver', 'receiver', 'bare', 'direct'];
    const seen: Record<Side, number> = { receiver: 0, bare: 0, direct: 0 };
    const warmRss = await currentRss(receiver.pid);
    const elapsed: Record<Side, number> = { receiver: 0, bare: 0, direct: 0 };
    const cpu: Record<Side, number> = { receiver: 0, bare: 0, direct: 0 };
    for (const side of order) {
      const [from, to] = seen[side] === 0 ? [0, half] : [half, N];
      seen[side] += 1;
      const started = process.hrtime.bigint();
      const cpuBefore = await cpuNow(side);
      await runPool(to - from, CONCURRENCY, (k) => send[side](from + k));
      elapsed[side] += Number(process.hrtime.bigint() - started) / 1e9;
      cpu[side] += (await cpuNow(side)) - cpuBefore;
    }
    const rss = await peakRss(receiver.pid);
    const bareRss = await peakRss(bare.pid);
    const receiverCheck = await verify(receiverDb, 'r', N);
    const directCheck = await verify(directDb, 'd', N);
    // The warm-up documents are in the same projects: 200 each.
    receiverCheck.extra -= 200;
    directCheck.extra -= 200;

    const receiverRate = N / elapsed.receiver;
    const directRate = N / elapsed.direct;
    const bareRate = N / elapsed.bare;
    const result = {
      messages: N,
      concurrency: CONCURRENCY,
      receiverPerSecond: Math.round(receiverRate),
      directPerSecond: Math.round(directRate),
      bareFunctionPerSecond: Math.round(bareRate),
      ratio: Number((receiverRate / directRate).toFixed(3)),
      ratioToBareFunction: Number((receiverRate / bareRate).toFixed(3)),
      receiverPeakRssMb: Number((rss / 1024 / 1024).toFixed(1)),
      receiverRssAfterWarmupMb: Number((warmRss / 1024 / 1024).toFixed(1)),
      bareFunctionPeakRssMb: Number((bareRss / 1024 / 1024).toFixed(1)),
      receiverCpuMsPerMessage: Number((cpu.receiver / N).toFixed(2)),
      directClientCpuMsPerMessage: Number((cpu.direct / N).toFixed(2)),
      bareFunctionCpuMsPerMessage: Number((cpu.bare / N).toFixed(2)),
      missing: receiverCheck.missing,
      doubled: receiverCheck.extra,
      directMissing: directCheck.missing,
      directDoubled: directCheck.extra,
      targets: { ratio: '>= 0.8', receiverPeakRssMb: '<= 200', missing: 0, doubled: 0 },
    };
    if (JSON_OUTPUT) {
      console.log(JSON.stringify(result));
    } else {
      console.log(
        `receiver: ${result.receiverPerSecond} msg/s   direct storeMessage(): ${result.directPerSecond} msg/s   ratio receiver/direct: ${result.ratio} (target >= 0.8)`,
      );
      console.log(
        `bare functions-framework create(): ${result.bareFunctionPerSecond} msg/s   ratio receiver/bare function: ${result.ratioToBareFunction}`,
      );
      console.log(
        `receiver peak RSS: ${result.receiverPeakRssMb} MB (target <= 200; ${result.receiverRssAfterWarmupMb} MB after warm-up; bare function ${result.bareFunctionPeakRssMb} MB)   missing: ${result.missing}   doubled: ${result.doubled} (direct: ${result.directMissing} / ${result.directDoubled})`,
      );
      console.log(
        `CPU per message: receiver process ${result.receiverCpuMsPerMessage} ms, bare function ${result.bareFunctionCpuMsPerMessage} ms, direct client ${result.directClientCpuMsPerMessage} ms   (${N} messages, concurrency ${CONCURRENCY})`,
      );
    }
    const ok = result.missing === 0 && result.doubled === 0 && result.directMissing === 0 && result.directDoubled === 0;
    process.exitCode = ok ? 0 : 1;
  } finally {
    agent.destroy();
    await Promise.all([receiver.stop(), bare.stop()]);
    await Promise.all([directDb.terminate(), receiverDb.terminate()]);
    await emulators.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
