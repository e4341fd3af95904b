/**
 * `npm run bench:receive`: what does the receiver cost beyond its one write?
 *
 * Pushes N envelopes (default 5,000) over loopback HTTP at concurrency 32
 * into receivePubSubPush (Functions Framework CLI, auth off, real Firestore
 * emulator) and, in the same run, creates the same number of equivalent
 * inbox documents straight through the Firestore client. The two alternate
 * in ABBA rounds so drift on a shared machine hits both. Prints both rates,
 * the ratio receiver/direct (target >= 0.8), the receiver's peak RSS
 * (target <= 200 MB) and a check that no document is missing or doubled.
 *
 * Flags: --n=5000 --concurrency=32 --json
 */
import type { Firestore } from '@google-cloud/firestore';
import { Agent, request } from 'node:http';
import { createFirestore } from '../functions/src/firestore';
import { INBOX, openDocument } from '../functions/src/inbox/document';
import { parsePushEnvelope } from '../functions/src/receiver/envelope';
import { interpretMessage } from '../functions/src/receiver/interpret';
import { DEFAULT_REGISTRY } from '../functions/src/receiver/registry';
import { serveFunction } from '../tools/local/serve-function';
import { useEmulators } from '../tools/local/use-emulators';
import { argNumber, cpuMs, currentRss, peakRss, runPool } from './pool';

const N = argNumber('n', 5_000);
const CONCURRENCY = argNumber('concurrency', 32);
const JSON_OUTPUT = process.argv.includes('--json');
const SUBSCRIPTION = 'projects/bench/subscriptions/work-order-completed-push';

function envelopeFor(side: string, i: number): Record<string, unknown> {
  const payload = { workOrderId: `WO-${side}-${i}`, completedItems: i % 97, completionTimestamp: '2026-11-29T10:00:00Z', eventId: `evt-${side}-${i}` };
  return {
    message: { data: Buffer.from(JSON.stringify(payload)).toString('base64'), attributes: { eventType: 'WorkOrderCompleted' }, messageId: `${side}-${i}`, publishTime: new Date().toISOString() },
    subscription: SUBSCRIPTION,
  };
}

/** Expected inbox id of message i (the same pure code the receiver runs). */
function idFor(side: string, i: number): string {
  const parsed = parsePushEnvelope(envelopeFor(side, i));
  if (!parsed.ok) throw new Error(parsed.error);
  return interpretMessage(parsed.envelope, DEFAULT_REGISTRY).id;
}

async function verify(db: Firestore, side: string, count: number): Promise<{ missing: number; extra: number }> {
  const total = (await db.collection(INBOX).count().get()).data().count;
  let missing = 0;
  for (let start = 0; start < count; start += 500) {
    const refs = Array.from({ length: Math.min(500, count - start) }, (_, k) => db.collection(INBOX).doc(idFor(side, start + k)));
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
  const receiverDb = createFirestore(receiverProject);
  // A lean keep-alive client: on two cores the load generator competes with the receiver for CPU.
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    const push = (side: string, i: number): Promise<void> =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify(envelopeFor(side, i));
        const req = request(receiver.url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`receiver answered ${res.statusCode ?? '?'}`))));
        });
        req.on('error', reject);
        req.end(body);
      });
    const write = async (side: string, i: number): Promise<void> => {
      const parsed = parsePushEnvelope(envelopeFor(side, i));
      if (!parsed.ok) throw new Error(parsed.error);
      const draft = interpretMessage(parsed.envelope, DEFAULT_REGISTRY);
      if (draft.kind !== 'valid') throw new Error('bench message is invalid');
      await directDb.collection(INBOX).doc(draft.id).create(openDocument(draft, { envelope: parsed.envelope, now: new Date(), shards: 16 }));
    };
    // Warm both paths (connections, JIT, the emulator's caches).
    await runPool(200, CONCURRENCY, (i) => push('warm', i));
    await runPool(200, CONCURRENCY, (i) => write('warm', i));

    const half = Math.floor(N / 2);
    const rounds: Array<['receiver' | 'direct', number, number]> = [
      ['direct', 0, half],
      ['receiver', 0, half],
      ['receiver', half, N],
      ['direct', half, N],
    ];
    const warmRss = await currentRss(receiver.pid);
    const elapsed = { receiver: 0, direct: 0 };
    // CPU spent per message: by the receiver process on its side, by this process (the direct client) on the other.
    const cpu = { receiver: 0, direct: 0 };
    for (const [side, from, to] of rounds) {
      const started = process.hrtime.bigint();
      const cpuBefore = side === 'receiver' ? await cpuMs(receiver.pid) : process.cpuUsage();
      await runPool(to - from, CONCURRENCY, (k) => (side === 'receiver' ? push('r', from + k) : write('d', from + k)));
      elapsed[side] += Number(process.hrtime.bigint() - started) / 1e9;
      if (typeof cpuBefore === 'number') cpu.receiver += (await cpuMs(receiver.pid)) - cpuBefore;
      else {
        const used = process.cpuUsage(cpuBefore);
        cpu.direct += (used.user + used.system) / 1000;
      }
    }
    const rss = await peakRss(receiver.pid);
    const receiverCheck = await verify(receiverDb, 'r', N);
    const directCheck = await verify(directDb, 'd', N);
    // The warm-up documents are in the same projects: 200 each.
    receiverCheck.extra -= 200;
    directCheck.extra -= 200;

    const receiverRate = N / elapsed.receiver;
    const directRate = N / elapsed.direct;
    const result = {
      messages: N,
      concurrency: CONCURRENCY,
      receiverPerSecond: Math.round(receiverRate),
      directPerSecond: Math.round(directRate),
      ratio: Number((receiverRate / directRate).toFixed(3)),
      receiverPeakRssMb: Number((rss / 1024 / 1024).toFixed(1)),
      receiverRssAfterWarmupMb: Number((warmRss / 1024 / 1024).toFixed(1)),
      receiverCpuMsPerMessage: Number((cpu.receiver / N).toFixed(2)),
      directClientCpuMsPerMessage: Number((cpu.direct / N).toFixed(2)),
      missing: receiverCheck.missing,
      doubled: receiverCheck.extra,
      directMissing: directCheck.missing,
      targets: { ratio: '>= 0.8', receiverPeakRssMb: '<= 200', missing: 0, doubled: 0 },
    };
    if (JSON_OUTPUT) {
      console.log(JSON.stringify(result));
    } else {
      console.log(`receiver: ${result.receiverPerSecond} msg/s   direct create(): ${result.directPerSecond} docs/s   ratio receiver/direct: ${result.ratio} (target >= 0.8)`);
      console.log(`receiver peak RSS: ${result.receiverPeakRssMb} MB (target <= 200; ${result.receiverRssAfterWarmupMb} MB after warm-up)   missing: ${result.missing}   doubled: ${result.doubled}`);
      console.log(`CPU per message: receiver process ${result.receiverCpuMsPerMessage} ms, direct client ${result.directClientCpuMsPerMessage} ms   (${N} messages, concurrency ${CONCURRENCY})`);
    }
    const ok = result.missing === 0 && result.doubled === 0 && directCheck.missing === 0;
    process.exitCode = ok ? 0 : 1;
  } finally {
    agent.destroy();
    await receiver.stop();
    await Promise.all([directDb.terminate(), receiverDb.terminate()]);
    await emulators.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
