/**
 * `npm run bench:payloads`: what does the claim check cost the receiver for
 * a large payload, against keeping the same bytes in Firestore?
 *
 * One receivePubSubPush process (Functions Framework CLI, auth off, the
 * Firestore emulator, the storage emulator `@inbox/storage-emulator` in this
 * process) takes loopback HTTP pushes of WorkOrderCompleted payloads of
 * exactly 1 MiB and 8 MiB of canonical JSON, two ways:
 *
 * - OFFLOADED, the real path: a valid payload over INBOX_OFFLOAD_BYTES is
 *   written to the inbox bucket (INBOX_PAYLOAD_BUCKET, created through the
 *   real client) and the OPEN document keeps its summary.
 * - KEPT IN FIRESTORE: a valid payload over 1 MiB cannot be a Firestore
 *   document, so the only way to keep such bytes there is the one the
 *   receiver uses for unreadable messages: a PARKED document with the bytes
 *   in 768 KiB `rawChunks`. This side pushes the same payload, of the same
 *   size, with one field (completionTimestamp) that fails the schema, to the
 *   same receiver. Both sides decode, parse and validate the whole payload;
 *   they differ in where the bytes go (and the offloaded side's canonical
 *   JSON of the object).
 *
 * The sides alternate in ABBA rounds per size, so drift on a shared machine
 * hits both. Prints per side and size: messages/s, MiB/s, p50/p95 of the
 * time to the 200 answer, the receiver's peak RSS (VmHWM, reset at the start
 * of each round), the ratios offloaded/firestore, and checks that every
 * message was stored exactly once (documents, objects, chunks), and the CPU
 * per message of the receiver, the Firestore emulator and this process
 * (the load generator and the storage emulator). Writes
 * bench/results/receive-payloads.json and .svg.
 *
 * Flags: --n1=40 --n8=12 (messages per side of 1 MiB and 8 MiB)
 *        --concurrency=4 --warmup=4 (per side and size) --json
 */
import type { Firestore } from '@google-cloud/firestore';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../functions/src/core/hash';
import { createFirestore } from '../../../functions/src/firestore';
import { INBOX, RAW_CHUNK_BYTES, RAW_CHUNKS } from '../../../functions/src/inbox/document';
import { invalidDocId, messageDocId } from '../../../functions/src/inbox/ids';
import { completionOfBytes } from '../../../test/support/claims';
import { startTestStorage } from '../../../test/support/storage';
import { serveFunction } from '../../../tools/local/serve-function';
import { useEmulators } from '../../../tools/local/use-emulators';
import { barChart } from './chart';
import { argNumber, cpuMs, currentRss, peakRss, postJson, resetPeakRss, runPool } from './pool';
import { emulatorPid, machine, ownCpuMs, percentile, round } from './relay-stats';

const MIB = 1024 * 1024;
const COUNTS: Record<Size, number> = { 1: argNumber('n1', 40), 8: argNumber('n8', 12) };
const CONCURRENCY = argNumber('concurrency', 4);
const WARMUP = argNumber('warmup', 4);
const JSON_OUTPUT = process.argv.includes('--json');
const SUBSCRIPTION = 'projects/bench/subscriptions/work-order-completed-push';
const BUCKET = 'bench-inbox-payloads';
/** Redeliveries a 5xx gets (Pub/Sub would redeliver too); counted and printed. */
const ATTEMPTS = 4;

type Size = 1 | 8;
type Side = 'offloaded' | 'firestore';
const SIZES: readonly Size[] = [1, 8];
const LABEL: Record<Side, string> = { offloaded: 'OFFLOADED', firestore: 'KEPT IN FIRESTORE' };

/**
 * Stands for a message's tag in a payload template: 8 characters, so every
 * message of a size has exactly the template's length. Tags are side,
 * phase, size and index: `om010007` (offloaded, measured, 1 MiB, #7).
 */
const TAG = '@@@@@@@@';
const tagOf = (side: Side, phase: 'w' | 'm', size: Size, i: number): string =>
  `${side[0] ?? ''}${phase}${String(size).padStart(2, '0')}${String(i).padStart(4, '0')}`;

/** The pushed data of each side and size, made once: completionOfBytes of thousands of items is too slow per message. */
function templates(): Record<Side, Record<Size, string>> {
  const make = (side: Side, size: Size): string =>
    // A valid date shape the schema refuses (hour 25): the payload stays the same shape and size, and is unreadable.
    JSON.stringify(
      completionOfBytes(`WO-${TAG}`, size * MIB, {
        eventId: `evt-${TAG}`,
        ...(side === 'firestore' ? { completionTimestamp: '2026-11-29T25:00:00Z' } : {}),
      }),
    );
  return {
    offloaded: { 1: make('offloaded', 1), 8: make('offloaded', 8) },
    firestore: { 1: make('firestore', 1), 8: make('firestore', 8) },
  };
}

function body(template: string, tag: string): Buffer {
  const data = Buffer.from(template.replaceAll(TAG, tag)).toString('base64');
  return Buffer.from(
    JSON.stringify({
      message: {
        data,
        attributes: { eventType: 'WorkOrderCompleted' },
        messageId: tag,
        publishTime: new Date().toISOString(),
      },
      subscription: SUBSCRIPTION,
    }),
  );
}

/**
 * CPU ms of the canonical JSON of a payload and its SHA-256, median of 3 in
 * this process: interpret.ts does it for every valid message (the hash is
 * the dedup check's, the bytes are the object's), wherever the bytes go; the
 * KEPT IN FIRESTORE side, being unreadable, never gets that far. Printed so
 * the reader can take it off the offloaded side's receiver CPU.
 */
function canonicalCostMs(template: string): number {
  const runs = [0, 1, 2].map(() => {
    const started = process.hrtime.bigint();
    createHash('sha256')
      .update(canonicalJson(JSON.parse(template)))
      .digest('hex');
    return Number(process.hrtime.bigint() - started) / 1e6;
  });
  return percentile(
    runs.sort((a, b) => a - b),
    50,
  );
}

/** Where the receiver puts message `tag` (the ids interpret.ts gives a valid and an unreadable message). */
const idOf = (side: Side, tag: string): string =>
  side === 'offloaded'
    ? messageDocId('WorkOrderCompleted', `WO-${tag}`, `evt-${tag}`)
    : invalidDocId(SUBSCRIPTION, tag);

interface Measured {
  seconds: number;
  /** CPU ms spent during the side's rounds by the receiver, the Firestore emulator (NaN if not found) and this process (load generator and storage emulator). */
  cpu: { receiver: number; firestoreEmulator: number; benchProcess: number };
  latenciesMs: number[];
  peakRss: number;
  redeliveries: number;
}

interface Row {
  side: Side;
  sizeMiB: Size;
  messages: number;
  perSecond: number;
  mibPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  peakRssMb: number;
  redeliveries: number;
  cpuMsPerMessage: { receiver: number; firestoreEmulator: number; benchProcess: number };
}

interface Check {
  documents: { expected: number; found: number; missing: number; extra: number; wrong: number };
  objects: { expected: number; found: number; extra: number; wrongSize: number };
  rawChunks: { expected: number; found: number };
}

/** Every message stored once: its document (of its kind and size), its object or its chunks, and nothing else. */
async function verify(
  db: Firestore,
  objects: ReadonlyArray<{ name: string; data: Buffer }>,
  sent: ReadonlyArray<{ side: Side; size: Size; tag: string }>,
): Promise<Check> {
  const snaps = await db.getAll(...sent.map((m) => db.collection(INBOX).doc(idOf(m.side, m.tag))));
  const objectBytes = new Map(objects.map((o) => [o.name, o.data.length]));
  let found = 0;
  let wrong = 0;
  let objectsFound = 0;
  let wrongSize = 0;
  let chunks = 0;
  sent.forEach((m, k) => {
    const doc = snaps[k]?.data();
    if (doc === undefined) return;
    found++;
    const bytes = m.size * MIB;
    if (m.side === 'firestore') {
      chunks += Math.ceil(bytes / RAW_CHUNK_BYTES);
      if (
        doc.status !== 'PARKED' ||
        doc.reason !== 'INVALID_PAYLOAD' ||
        doc.rawDataBytes !== bytes ||
        doc.rawDataChunks !== Math.ceil(bytes / RAW_CHUNK_BYTES)
      )
        wrong++;
      return;
    }
    const offloaded = doc.offloaded as { object?: unknown; bytes?: unknown } | null;
    if (doc.status !== 'OPEN' || offloaded?.bytes !== bytes) wrong++;
    const stored = objectBytes.get(String(offloaded?.object));
    if (stored === undefined) return;
    objectsFound++;
    if (stored !== bytes) wrongSize++;
  });
  const total = (await db.collection(INBOX).count().get()).data().count;
  const chunksFound = (await db.collectionGroup(RAW_CHUNKS).count().get()).data().count;
  const offloadedSent = sent.filter((m) => m.side === 'offloaded').length;
  return {
    documents: { expected: sent.length, found, missing: sent.length - found, extra: total - found, wrong },
    objects: { expected: offloadedSent, found: objectsFound, extra: objects.length - objectsFound, wrongSize },
    rawChunks: { expected: chunks, found: chunksFound },
  };
}

async function main(): Promise<void> {
  const emulators = await useEmulators();
  const run = Date.now().toString(36);
  const projectId = `bench-payloads-${run}`;
  // This process's storage client (bucket creation) must not probe for a metadata server, as the served functions don't.
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  const storage = await startTestStorage([BUCKET], projectId);
  const receiver = await serveFunction({
    target: 'receivePubSubPush',
    env: { GOOGLE_CLOUD_PROJECT: projectId, INBOX_PUSH_AUTH: 'disabled', INBOX_PAYLOAD_BUCKET: BUCKET, ...storage.env },
    logs: 'discard',
  });
  const db = createFirestore(projectId);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    const template = templates();
    const firestorePid = await emulatorPid('firestore', emulators.firestoreHost);
    const cpuNow = async (): Promise<Measured['cpu']> => ({
      receiver: await cpuMs(receiver.pid),
      firestoreEmulator: firestorePid === null ? Number.NaN : await cpuMs(firestorePid),
      benchProcess: ownCpuMs(),
    });
    const sent: Array<{ side: Side; size: Size; tag: string }> = [];
    const expected: Record<Side, { status: string; reason: string | null }> = {
      offloaded: { status: 'OPEN', reason: null },
      firestore: { status: 'PARKED', reason: 'INVALID_PAYLOAD' },
    };
    /** Pushes the bodies at CONCURRENCY; a 5xx is pushed again, as Pub/Sub would. Latency: first push to the 200. */
    const push = async (side: Side, size: Size, tags: readonly string[], into: Measured): Promise<void> => {
      // Built before the clock starts: the load generator shares the two cores with the receiver.
      const bodies = tags.map((tag) => body(template[side][size], tag));
      const cpuBefore = await cpuNow();
      const started = process.hrtime.bigint();
      await runPool(bodies.length, CONCURRENCY, async (k) => {
        const first = process.hrtime.bigint();
        for (let attempt = 1; ; attempt++) {
          const answer = await postJson(receiver.url, agent, bodies[k] ?? '');
          if (answer.status === 200) {
            const got = JSON.parse(answer.text) as { status?: unknown; reason?: unknown };
            if (got.status !== expected[side].status || got.reason !== expected[side].reason)
              throw new Error(`${side} ${tags[k] ?? ''}: unexpected answer ${answer.text}`);
            break;
          }
          if (answer.status < 500 || attempt === ATTEMPTS)
            throw new Error(
              `${side} ${tags[k] ?? ''}: receiver answered ${answer.status} ${answer.text.slice(0, 300)}`,
            );
          into.redeliveries++;
        }
        into.latenciesMs.push(Number(process.hrtime.bigint() - first) / 1e6);
      });
      into.seconds += Number(process.hrtime.bigint() - started) / 1e9;
      const cpuAfter = await cpuNow();
      for (const k of ['receiver', 'firestoreEmulator', 'benchProcess'] as const)
        into.cpu[k] += cpuAfter[k] - cpuBefore[k];
      sent.push(...tags.map((tag) => ({ side, size, tag })));
    };
    const range = (side: Side, phase: 'w' | 'm', size: Size, from: number, to: number): string[] =>
      Array.from({ length: to - from }, (_, k) => tagOf(side, phase, size, from + k));

    // Warm both paths (connections, JIT, the storage client's first load) at every size.
    const discard = (): Measured => ({
      seconds: 0,
      cpu: { receiver: 0, firestoreEmulator: 0, benchProcess: 0 },
      latenciesMs: [],
      peakRss: 0,
      redeliveries: 0,
    });
    for (const size of SIZES)
      for (const side of ['offloaded', 'firestore'] as const)
        await push(side, size, range(side, 'w', size, 0, WARMUP), discard());
    const warmRss = await currentRss(receiver.pid);

    const measured: Record<Side, Record<Size, Measured>> = {
      offloaded: { 1: discard(), 8: discard() },
      firestore: { 1: discard(), 8: discard() },
    };
    // ABBA: the two halves of each side, mirrored, so drift over the run hits both sides alike.
    const order: Side[] = ['offloaded', 'firestore', 'firestore', 'offloaded'];
    for (const size of SIZES) {
      const half = Math.floor(COUNTS[size] / 2);
      const done: Record<Side, boolean> = { offloaded: false, firestore: false };
      for (const side of order) {
        const [from, to] = done[side] ? [half, COUNTS[size]] : [0, half];
        done[side] = true;
        await resetPeakRss(receiver.pid);
        await push(side, size, range(side, 'm', size, from, to), measured[side][size]);
        measured[side][size].peakRss = Math.max(measured[side][size].peakRss, await peakRss(receiver.pid));
      }
    }
    const check = await verify(db, storage.emulator.objects(BUCKET), sent);
    const canonical = SIZES.map((size) => ({ sizeMiB: size, ms: round(canonicalCostMs(template.offloaded[size])) }));

    const row = (side: Side, size: Size): Row => {
      const m = measured[side][size];
      const sorted = [...m.latenciesMs].sort((a, b) => a - b);
      return {
        side,
        sizeMiB: size,
        messages: COUNTS[size],
        perSecond: round(COUNTS[size] / m.seconds, 2),
        mibPerSecond: round((COUNTS[size] * size) / m.seconds, 1),
        p50Ms: round(percentile(sorted, 50)),
        p95Ms: round(percentile(sorted, 95)),
        peakRssMb: round(m.peakRss / MIB, 1),
        redeliveries: m.redeliveries,
        cpuMsPerMessage: {
          receiver: round(m.cpu.receiver / COUNTS[size]),
          firestoreEmulator: round(m.cpu.firestoreEmulator / COUNTS[size]),
          benchProcess: round(m.cpu.benchProcess / COUNTS[size]),
        },
      };
    };
    const rows = SIZES.flatMap((size) => [row('offloaded', size), row('firestore', size)]);
    const ratios = SIZES.map((size) => {
      const [o, f] = [row('offloaded', size), row('firestore', size)];
      return { sizeMiB: size, rate: round(o.perSecond / f.perSecond, 2), peakRss: round(o.peakRssMb / f.peakRssMb, 2) };
    });
    const stored =
      check.documents.missing === 0 &&
      check.documents.extra === 0 &&
      check.documents.wrong === 0 &&
      check.objects.found === check.objects.expected &&
      check.objects.extra === 0 &&
      check.objects.wrongSize === 0 &&
      check.rawChunks.found === check.rawChunks.expected;
    const verdict = `${stored ? 'PASS' : 'FAIL'}: ${stored ? 'every message stored exactly once' : 'messages missing, doubled or wrong'}; offloaded/firestore rate ${ratios.map((r) => `${r.rate}x at ${r.sizeMiB} MiB`).join(', ')}; peak RSS ${ratios.map((r) => `${r.peakRss}x at ${r.sizeMiB} MiB`).join(', ')}`;
    const result = {
      comparison:
        'OFFLOADED = valid WorkOrderCompleted, payload written to the inbox bucket (storage emulator), OPEN document with the summary; KEPT IN FIRESTORE = the same payload and size with completionTimestamp failing the schema, PARKED document with the bytes in 768 KiB rawChunks (a valid payload over 1 MiB cannot be a Firestore document); one receiver process, ABBA rounds',
      settings: {
        counts: { '1MiB': COUNTS[1], '8MiB': COUNTS[8] },
        concurrency: CONCURRENCY,
        warmupPerSideAndSize: WARMUP,
      },
      machine: machine(),
      at: new Date().toISOString(),
      rows,
      ratiosOffloadedToFirestore: ratios,
      receiverRssAfterWarmupMb: round(warmRss / MIB, 1),
      /** Part of the offloaded side's receiver CPU that any valid payload pays (see canonicalCostMs). */
      canonicalJsonAndHashMs: canonical,
      check,
      verdict,
    };
    const dir = join(__dirname, 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'receive-payloads.json'), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(
      join(dir, 'receive-payloads.svg'),
      barChart(
        rows.map((r) => ({
          label: `${r.sizeMiB} MiB ${r.side === 'offloaded' ? 'offloaded' : 'in Firestore'}`,
          value: r.mibPerSecond,
          group: r.side,
        })),
        {
          title: `Receiver rate for 1 and 8 MiB payloads: offloaded to Cloud Storage vs kept in Firestore chunks`,
          unit: 'MiB/s',
        },
      ),
    );
    if (JSON_OUTPUT) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      console.log(`One receiver process, the same payload sizes two ways, ABBA rounds, concurrency ${CONCURRENCY}:`);
      console.log(
        `  ${LABEL.offloaded}: valid WorkOrderCompleted; the payload goes to the inbox bucket (storage emulator), the OPEN document keeps its summary`,
      );
      console.log(
        `  ${LABEL.firestore}: the same payload with completionTimestamp failing the schema; PARKED document, bytes in 768 KiB rawChunks`,
      );
      console.log(
        `  (a valid payload over 1 MiB cannot be a Firestore document: chunks are the only way to keep it in Firestore)`,
      );
      const cols = (cells: readonly string[]): string =>
        cells.map((c, i) => (i < 2 ? c.padEnd(i === 0 ? 6 : 18) : c.padStart(11))).join(' ');
      console.log(
        cols(['size', 'side', 'messages', 'msg/s', 'MiB/s', 'p50 ms', 'p95 ms', 'peak RSS MB', 'redelivered']),
      );
      for (const r of rows)
        console.log(
          cols([
            `${r.sizeMiB} MiB`,
            LABEL[r.side],
            ...[r.messages, r.perSecond, r.mibPerSecond, r.p50Ms, r.p95Ms, r.peakRssMb, r.redeliveries].map(String),
          ]),
        );
      const cpu = (r: Row): string =>
        `${r.sizeMiB} MiB ${r.side} ${r.cpuMsPerMessage.receiver} / ${r.cpuMsPerMessage.firestoreEmulator} / ${r.cpuMsPerMessage.benchProcess}`;
      console.log(
        `CPU ms per message, receiver / Firestore emulator / this process (load generator + storage emulator): ${rows.map(cpu).join('; ')}`,
      );
      console.log(
        `  of the offloaded side's receiver CPU, canonical JSON + SHA-256 (paid by any valid payload, not by the unreadable one): ${canonical.map((c) => `${c.ms} ms at ${c.sizeMiB} MiB`).join(', ')}`,
      );
      console.log(
        `ratio offloaded/firestore: ${ratios.map((r) => `${r.sizeMiB} MiB rate ${r.rate}, peak RSS ${r.peakRss}`).join('; ')}   (receiver RSS after warm-up ${result.receiverRssAfterWarmupMb} MB)`,
      );
      const d = check.documents;
      console.log(
        `stored: documents ${d.found}/${d.expected} (missing ${d.missing}, extra ${d.extra}, wrong ${d.wrong}), objects ${check.objects.found}/${check.objects.expected} (extra ${check.objects.extra}, wrong size ${check.objects.wrongSize}), rawChunks ${check.rawChunks.found}/${check.rawChunks.expected} (warm-up included)`,
      );
      console.log(`verdict: ${verdict}`);
      console.log('bench/results/receive-payloads.json, receive-payloads.svg');
    }
    process.exitCode = stored ? 0 : 1;
  } finally {
    agent.destroy();
    await receiver.stop();
    await db.terminate();
    await storage.stop();
    await emulators.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
