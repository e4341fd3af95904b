/**
 * The receiver under sustained load: `concurrency` clients push unique
 * completions (and some redeliveries) into receivePubSubPush, served by the
 * real Functions Framework CLI, for `durationMs`. Firestore is reached
 * through a TCP proxy that is cut now and then: the 503s that follow are the
 * injected errors, retried by the client as Pub/Sub would. Afterwards every
 * acknowledged message must have exactly one document, and the receiver's
 * RSS at the end must be close to its RSS after warm-up.
 */
import { Firestore } from '@google-cloud/firestore';
import { Agent, request } from 'node:http';
import { INBOX } from '../../../functions/src/inbox/document';
import { parsePushEnvelope } from '../../../functions/src/receiver/envelope';
import { interpretMessage } from '../../../functions/src/receiver/interpret';
import { WORK_ORDER_REGISTRY } from '../local/names';
import { currentRss } from '../bench/pool';
import { startTcpProxy } from '../../../tools/faults/tcp-proxy';
import { serveFunction } from '../../../tools/local/serve-function';
import { useEmulators } from '../../../tools/local/use-emulators';

export interface LoadOptions {
  readonly concurrency: number;
  readonly durationMs: number;
  /** RSS is read as the baseline this long after the start. */
  readonly warmupMs: number;
  /** The Firestore line is cut for `faultMs` every `faultEveryMs` (0: never). */
  readonly faultEveryMs: number;
  readonly faultMs: number;
  /** Share of requests that redeliver an already acknowledged message (0..1). */
  readonly redeliveryRatio: number;
  readonly progress: (line: string) => void;
}

export interface LoadResult {
  readonly concurrency: number;
  readonly seconds: number;
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly messages: number;
  readonly redeliveries: number;
  /** 503s of requests under way while the line was cut, or within the recovery grace after: retried, as Pub/Sub would. */
  readonly injectedErrors: number;
  readonly faultWindows: number;
  /** Any other answer than 200, or a 503 outside the fault windows, by status. */
  readonly unexpected: Readonly<Record<string, number>>;
  readonly missing: number;
  /** Documents beyond one per message (a duplicate stored twice). */
  readonly doubled: number;
  readonly rssAfterWarmupMb: number;
  readonly rssAtEndMb: number;
  /** rssAtEnd / rssAfterWarmup; the target is at most 1.2. */
  readonly rssRatio: number;
  /** RSS every 5 s from the start, MB: the trend behind the ratio. */
  readonly rssSamplesMb: readonly number[];
  readonly ok: boolean;
}

/** After the line is restored the client reconnects with backoff; 503s this soon after still count as injected. */
const RECOVERY_GRACE_MS = 5_000;
const SUBSCRIPTION = 'projects/load/subscriptions/work-order-completed-push';

function envelopeFor(run: string, i: number): Record<string, unknown> {
  const payload = {
    workOrderId: `WO-load-${run}-${i}`,
    completedItems: i % 89,
    completionTimestamp: '2026-11-30T10:00:00Z',
    eventId: `load-${run}-${i}`,
  };
  return {
    message: {
      data: Buffer.from(JSON.stringify(payload)).toString('base64'),
      attributes: { eventType: 'WorkOrderCompleted' },
      messageId: `${run}-${i}`,
    },
    subscription: SUBSCRIPTION,
  };
}

function idFor(run: string, i: number): string {
  const parsed = parsePushEnvelope(envelopeFor(run, i));
  if (!parsed.ok) throw new Error(parsed.error);
  return interpretMessage(parsed.envelope, WORK_ORDER_REGISTRY, { referenceBuckets: [] }).id;
}

const mb = (bytes: number): number => Math.round(bytes / 104_857.6) / 10;

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const emulators = await useEmulators();
  const run = Date.now().toString(36);
  const projectId = `load-${run}`;
  const line = await startTcpProxy(emulators.firestoreHost);
  const receiver = await serveFunction({
    target: 'receivePubSubPush',
    env: { GOOGLE_CLOUD_PROJECT: projectId, FIRESTORE_EMULATOR_HOST: line.host, INBOX_PUSH_AUTH: 'disabled' },
    logs: 'discard',
  });
  const db = new Firestore({
    projectId,
    host: emulators.firestoreHost,
    ssl: false,
    customHeaders: { Authorization: 'Bearer owner' },
  });
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  try {
    const windows: Array<{ from: number; to: number }> = [];
    /** A request that was under way at any moment of a cut (or its recovery grace) met the injected fault. */
    const injected = (sent: number, answered: number): boolean =>
      windows.some((w) => sent <= w.to + RECOVERY_GRACE_MS && answered >= w.from);
    const post = (i: number): Promise<number> =>
      new Promise((resolve) => {
        const body = JSON.stringify(envelopeFor(run, i));
        const req = request(
          receiver.url,
          {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', () => resolve(0));
        req.end(body);
      });

    const started = Date.now();
    const stopAt = started + options.durationMs;
    let next = 0;
    const acked: number[] = [];
    let requests = 0;
    let redeliveries = 0;
    let injectedErrors = 0;
    const unexpected: Record<string, number> = {};
    /** Sends message i until it is acknowledged (200), as Pub/Sub redelivers a 5xx. */
    const deliver = async (i: number): Promise<void> => {
      for (;;) {
        const sent = Date.now();
        const status = await post(i);
        requests += 1;
        if (status === 200) return;
        if (status === 503 && injected(sent, Date.now())) injectedErrors += 1;
        else unexpected[String(status)] = (unexpected[String(status)] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const client = async (): Promise<void> => {
      while (Date.now() < stopAt) {
        const old =
          acked.length > 0 && Math.random() < options.redeliveryRatio
            ? acked[Math.floor(Math.random() * acked.length)]
            : undefined;
        if (old !== undefined) {
          redeliveries += 1;
          await deliver(old);
          continue;
        }
        const i = next++;
        await deliver(i);
        acked.push(i);
      }
    };
    const rssSamplesMb: number[] = [];
    const sampler = setInterval(() => {
      void currentRss(receiver.pid).then(
        (rss) => rssSamplesMb.push(mb(rss)),
        () => undefined,
      );
    }, 5_000);
    let rssAfterWarmup = 0;
    const warm = setTimeout(() => {
      void currentRss(receiver.pid).then((rss) => {
        rssAfterWarmup = rss;
        options.progress(`after warm-up: RSS ${mb(rss)} MB, ${requests} requests`);
      });
    }, options.warmupMs);
    const faults =
      options.faultEveryMs <= 0
        ? null
        : setInterval(() => {
            const from = Date.now();
            // No cut that outlasts the run or overlaps the one under way.
            if (from + options.faultMs > stopAt || line.mode() !== 'forward') return;
            // Recorded at once, so 503s during the cut are recognised; its end is set when the line is back.
            const window = { from, to: from + options.faultMs };
            windows.push(window);
            line.setMode('refuse');
            setTimeout(() => {
              line.setMode('forward');
              window.to = Date.now();
              options.progress(`line to Firestore cut for ${options.faultMs} ms; ${requests} requests so far`);
            }, options.faultMs);
          }, options.faultEveryMs);
    await Promise.all(Array.from({ length: options.concurrency }, client));
    clearTimeout(warm);
    clearInterval(sampler);
    if (faults !== null) clearInterval(faults);
    const rssAtEnd = await currentRss(receiver.pid);
    const seconds = (Date.now() - started) / 1000;

    const messages = acked.length;
    let missing = 0;
    for (let start = 0; start < messages; start += 500) {
      const snaps = await db.getAll(
        ...acked.slice(start, start + 500).map((i) => db.collection(INBOX).doc(idFor(run, i))),
      );
      missing += snaps.filter((s) => !s.exists).length;
    }
    const stored = (await db.collection(INBOX).count().get()).data().count;
    const doubled = Math.max(0, stored - (messages - missing));
    const rssRatio = rssAfterWarmup === 0 ? Number.NaN : Math.round((rssAtEnd / rssAfterWarmup) * 100) / 100;
    const clean = Object.keys(unexpected).length === 0 && missing === 0 && doubled === 0;
    return {
      concurrency: options.concurrency,
      seconds: Math.round(seconds * 10) / 10,
      requests,
      requestsPerSecond: Math.round(requests / seconds),
      messages,
      redeliveries,
      injectedErrors,
      faultWindows: windows.length,
      unexpected,
      missing,
      doubled,
      rssAfterWarmupMb: mb(rssAfterWarmup),
      rssAtEndMb: mb(rssAtEnd),
      rssRatio,
      rssSamplesMb,
      ok: clean && rssRatio <= 1.2,
    };
  } finally {
    agent.destroy();
    await db.terminate();
    await receiver.stop();
    await line.close();
    await emulators.stop();
  }
}
