/**
 * `npm run bench:push`: how many pushes the Pub/Sub emulator keeps in flight
 * on one push subscription, against an endpoint that answers after a fixed
 * delay. Two delays in one run, so the result is a ratio: if the emulator
 * kept a fixed number of pushes in flight, the delivered rate falls in
 * proportion to the delay (rate × delay stays the same); real Pub/Sub raises
 * a subscription's concurrency as pushes succeed instead.
 *
 * Why it matters: `npm run bench` offers 25 messages/s to each design's push
 * endpoint. A receiver that answers in T ms gets at most (in flight) ÷ T
 * messages a second from the emulator; above that the queue grows in the
 * emulator, before any of our code runs (docs/performance.md, "Three
 * designs"). The subscription is set up as the local stack's
 * (tools/local/topology.ts: retry policy, dead-letter topic, ack deadline).
 *
 * Flags: --n=300 (messages per delay) --fast-ms=50 --slow-ms=200 --json
 */
import { PubSub } from '@google-cloud/pubsub';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useEmulators } from '../../../tools/local/use-emulators';
import { MAX_DELIVERY_ATTEMPTS, RETRY_POLICY } from '../../../tools/local/topology';
import { argNumber } from './pool';

const N = argNumber('n', 300);
const FAST_MS = argNumber('fast-ms', 50);
const SLOW_MS = argNumber('slow-ms', 200);
const JSON_OUTPUT = process.argv.includes('--json');
/** A delay's run ends when every message was answered, or after this long. */
const LIMIT_MS = 120_000;

interface DelayResult {
  readonly delayMs: number;
  readonly answered: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly maxInFlight: number;
  /** perSecond × delay: the pushes in flight on average. */
  readonly meanInFlight: number;
}

/** An endpoint that answers every push 200 after `delayMs`, counting what is in flight. */
function slowEndpoint(delayMs: number): { server: Server; stats: { inFlight: number; max: number; answered: number } } {
  const stats = { inFlight: 0, max: 0, answered: 0 };
  const server = createServer((req, res) => {
    stats.inFlight += 1;
    stats.max = Math.max(stats.max, stats.inFlight);
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        stats.inFlight -= 1;
        stats.answered += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      }, delayMs),
    );
  });
  return { server, stats };
}

async function measure(pubsub: PubSub, delayMs: number): Promise<DelayResult> {
  const { server, stats } = slowEndpoint(delayMs);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const [topic] = await pubsub.createTopic(`push-${delayMs}-${Date.now().toString(36)}`);
    const [deadLetter] = await pubsub.createTopic(`${topic.name.split('/').pop() ?? 'push'}-dlt`);
    await topic.createSubscription(`${topic.name.split('/').pop() ?? 'push'}-sub`, {
      pushConfig: { pushEndpoint: `http://127.0.0.1:${port}/` },
      retryPolicy: RETRY_POLICY,
      deadLetterPolicy: { deadLetterTopic: deadLetter.name, maxDeliveryAttempts: MAX_DELIVERY_ATTEMPTS },
      ackDeadlineSeconds: 10,
    });
    // Everything published at once: the emulator alone decides how fast it pushes.
    await Promise.all(Array.from({ length: N }, (_, i) => topic.publishMessage({ data: Buffer.from(String(i)) })));
    const started = Date.now();
    while (stats.answered < N && Date.now() - started < LIMIT_MS) await new Promise((r) => setTimeout(r, 50));
    const seconds = (Date.now() - started) / 1000;
    const perSecond = stats.answered / seconds;
    return {
      delayMs,
      answered: stats.answered,
      seconds: round(seconds),
      perSecond: round(perSecond),
      maxInFlight: stats.max,
      meanInFlight: round((perSecond * delayMs) / 1000),
    };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const round = (x: number): number => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  const emulators = await useEmulators(false);
  const pubsub = new PubSub({ projectId: 'bench-push', apiEndpoint: emulators.pubsubHost });
  try {
    const fast = await measure(pubsub, FAST_MS);
    const slow = await measure(pubsub, SLOW_MS);
    const result = {
      n: N,
      fast,
      slow,
      // A fixed number in flight: the rates' ratio equals the delays' ratio (here 4).
      rateRatio: round(fast.perSecond / Math.max(0.001, slow.perSecond)),
      delayRatio: round(SLOW_MS / FAST_MS),
    };
    if (JSON_OUTPUT) console.log(JSON.stringify(result, null, 2));
    else {
      for (const r of [fast, slow])
        console.log(
          `endpoint answering after ${r.delayMs} ms: ${r.answered}/${N} in ${r.seconds} s, ${r.perSecond}/s, at most ${r.maxInFlight} in flight (mean ${r.meanInFlight})`,
        );
      console.log(
        `rate ${FAST_MS} ms / rate ${SLOW_MS} ms: ${result.rateRatio} (delays' ratio ${result.delayRatio}: equal means a fixed number of pushes in flight)`,
      );
    }
  } finally {
    await pubsub.close();
    await emulators.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
