/**
 * bench:cost's arithmetic: per-work-order figures from a design's totals,
 * the price per 1,000 work orders from bench/cost/prices.ts, the scheduled
 * work per hour, and the tables.
 */
import { FUNCTION_SIZES, PRICE_REGION, PRICES, PRICES_AS_OF } from './prices';
import type { DesignCost } from './run';

/** One design's figures per work order and its price per 1,000. */
export interface PerWorkOrder {
  readonly design: DesignCost['design'];
  readonly reads: number;
  readonly writes: number;
  /** Deletes requested now (no-op deletes included: counted as billed). */
  readonly deletes: number;
  /** TTL deletes to come (documents with expireAt at the end). */
  readonly deferredDeletes: number;
  readonly firestoreOps: number;
  readonly indexEntries: number;
  /** CreateTask calls + dispatch attempts (+ timers' future dispatches). */
  readonly tasksOperations: number;
  readonly requests: number;
  readonly pubsubMessages: number;
  readonly pubsubBillableBytes: number;
  /** CPU ms of the functions (and a baseline's process). */
  readonly functionsCpuMs: number;
  readonly emulatorsCpuMs: number;
  /** Firestore reads/writes/deletes and CPU ms by function. */
  readonly byFunction: Record<
    string,
    { reads: number; writes: number; deletes: number; cpuMs: number; requests: number }
  >;
  /** USD per 1,000 work orders, by product. */
  readonly price: {
    firestore: number;
    cloudTasks: number;
    cloudRunRequests: number;
    cloudRunCompute: number;
    pubsub: number;
    total: number;
  };
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
const sizeOf = (fn: string): { memoryGib: number; vcpu: number } =>
  fn in FUNCTION_SIZES ? FUNCTION_SIZES[fn as keyof typeof FUNCTION_SIZES] : FUNCTION_SIZES.receivePubSubPush;

/** Cloud Run compute of `cpuMs` used by function `fn`: vCPU-seconds = CPU-seconds; GiB-seconds = instance-seconds × memory. */
function computeUsd(fn: string, cpuMs: number): number {
  const size = sizeOf(fn);
  const cpuS = cpuMs / 1000;
  return cpuS * PRICES.cloudRunVcpuSecond.usd + (cpuS / size.vcpu) * size.memoryGib * PRICES.cloudRunGibSecond.usd;
}

export function perWorkOrder(d: DesignCost): PerWorkOrder {
  const n = Math.max(1, d.n);
  const functions = new Set([
    ...Object.keys(d.firestore),
    ...Object.keys(d.requests),
    ...Object.keys(d.cpuMs).filter((k) => k in FUNCTION_SIZES || k === 'baseline'),
  ]);
  const byFunction: PerWorkOrder['byFunction'] = {};
  for (const fn of functions) {
    const f = d.firestore[fn];
    byFunction[fn] = {
      reads: round((f?.reads ?? 0) / n),
      writes: round((f?.writes ?? 0) / n),
      deletes: round((f?.deletes ?? 0) / n),
      cpuMs: round((d.cpuMs[fn] ?? 0) / n),
      requests: round((d.requests[fn] ?? 0) / n),
    };
  }
  const sum = (pick: (f: DesignCost['firestore'][string]) => number): number =>
    Object.values(d.firestore).reduce((t, f) => t + pick(f), 0);
  const reads = sum((f) => f.reads) / n;
  const writes = sum((f) => f.writes) / n;
  const deletes = sum((f) => f.deletes) / n;
  const deferredDeletes = Object.values(d.deferredDeletes).reduce((a, b) => a + b, 0) / n;
  // A timer left behind fires once, later: one more dispatch and one more fireTimer request.
  const tasksOperations = (d.tasks.createCalls + d.tasks.dispatches + d.tasks.deferredDispatches) / n;
  const requests = (Object.values(d.requests).reduce((a, b) => a + b, 0) + d.tasks.deferredDispatches) / n;
  const topics = Object.values(d.pubsub);
  const pubsubMessages = (topics.reduce((t, c) => t + c.messages, 0) + d.pushes.count + d.pulls.count) / n;
  const pubsubBillableBytes =
    (topics.reduce((t, c) => t + c.billableBytes, 0) + d.pushes.billableBytes + d.pulls.billableBytes) / n;
  const functionsCpuMs = [...functions].reduce((t, fn) => t + (d.cpuMs[fn] ?? 0), 0) / n;
  const emulatorsCpuMs = ((d.cpuMs.firestoreEmulator ?? 0) + (d.cpuMs.pubsubEmulator ?? 0)) / n;
  const k = 1000;
  const firestore =
    k *
    (reads * PRICES.firestoreRead.usd +
      writes * PRICES.firestoreWrite.usd +
      (deletes + deferredDeletes) * PRICES.firestoreDelete.usd);
  const cloudTasks = k * tasksOperations * PRICES.cloudTasksOperation.usd;
  const cloudRunRequests = k * requests * PRICES.cloudRunRequest.usd;
  const cloudRunCompute = (k / n) * [...functions].reduce((t, fn) => t + computeUsd(fn, d.cpuMs[fn] ?? 0), 0);
  const pubsub = k * pubsubBillableBytes * PRICES.pubsubByte.usd;
  return {
    design: d.design,
    reads: round(reads),
    writes: round(writes),
    deletes: round(deletes),
    deferredDeletes: round(deferredDeletes),
    firestoreOps: round(reads + writes + deletes + deferredDeletes),
    indexEntries: round(sum((f) => f.indexEntries) / n, 1),
    tasksOperations: round(tasksOperations),
    requests: round(requests),
    pubsubMessages: round(pubsubMessages),
    pubsubBillableBytes: Math.round(pubsubBillableBytes),
    functionsCpuMs: round(functionsCpuMs, 1),
    emulatorsCpuMs: round(emulatorsCpuMs, 1),
    byFunction,
    price: {
      firestore: round(firestore, 4),
      cloudTasks: round(cloudTasks, 4),
      cloudRunRequests: round(cloudRunRequests, 4),
      cloudRunCompute: round(cloudRunCompute, 4),
      pubsub: round(pubsub, 4),
      total: round(firestore + cloudTasks + cloudRunRequests + cloudRunCompute + pubsub, 4),
    },
  };
}

/** The scheduled relay and sweepJobs, each called once a minute as deployed: per hour. */
export function perHour(
  d: DesignCost,
): { reads: number; writes: number; deletes: number; requests: number; cpuMs: number; usd: number } | null {
  if (d.background === null) return null;
  const { relayInbox: r, sweepJobs: s } = d.background;
  const calls = 60;
  const reads = calls * (r.reads + s.reads);
  const writes = calls * (r.writes + s.writes);
  const deletes = calls * (r.deletes + s.deletes);
  const usd =
    reads * PRICES.firestoreRead.usd +
    writes * PRICES.firestoreWrite.usd +
    deletes * PRICES.firestoreDelete.usd +
    2 * calls * PRICES.cloudRunRequest.usd +
    computeUsd('relayInbox', calls * r.cpuMs) +
    computeUsd('sweepJobs', calls * s.cpuMs);
  return {
    reads: round(reads),
    writes: round(writes),
    deletes: round(deletes),
    requests: 2 * calls,
    cpuMs: Math.round(calls * (r.cpuMs + s.cpuMs)),
    usd: round(usd, 5),
  };
}

const LABELS: Record<DesignCost['design'], string> = {
  system: 'this system',
  naive: '(a) naive ack-in-catch',
  nack: '(b) nack + dead-letter',
};

/** The side-by-side table per work order, with this system's ratio to each baseline. */
export function table(rows: readonly PerWorkOrder[]): string {
  const system = rows.find((r) => r.design === 'system');
  const others = rows.filter((r) => r.design !== 'system');
  const lines: Array<[string, (r: PerWorkOrder) => number]> = [
    ['Firestore reads', (r) => r.reads],
    ['Firestore writes', (r) => r.writes],
    ['Firestore deletes (requested)', (r) => r.deletes],
    ['Firestore deletes (TTL, later)', (r) => r.deferredDeletes],
    ['Firestore ops (all)', (r) => r.firestoreOps],
    ['index entries written', (r) => r.indexEntries],
    ['Cloud Tasks operations', (r) => r.tasksOperations],
    ['function requests', (r) => r.requests],
    ['Pub/Sub messages (publish + deliver)', (r) => r.pubsubMessages],
    ['Pub/Sub billable bytes', (r) => r.pubsubBillableBytes],
    ['functions CPU ms', (r) => r.functionsCpuMs],
    ['emulators CPU ms (not billed)', (r) => r.emulatorsCpuMs],
    ['USD/1,000: Firestore', (r) => r.price.firestore],
    ['USD/1,000: Cloud Tasks', (r) => r.price.cloudTasks],
    ['USD/1,000: Cloud Run requests', (r) => r.price.cloudRunRequests],
    ['USD/1,000: Cloud Run CPU+memory', (r) => r.price.cloudRunCompute],
    ['USD/1,000: Pub/Sub', (r) => r.price.pubsub],
    ['USD/1,000: total', (r) => r.price.total],
  ];
  const ratio = (a: number, b: number): string => (b === 0 ? '-' : (a / b).toFixed(2));
  const head = `| per work order | ${rows.map((r) => LABELS[r.design]).join(' | ')} |${others.map((o) => ` system / ${o.design} |`).join('')}`;
  const rule = `|---|${rows.map(() => '---:').join('|')}|${others.map(() => '---:|').join('')}`;
  const body = lines.map(
    ([name, f]) =>
      `| ${name} | ${rows.map((r) => String(f(r))).join(' | ')} |${others.map((o) => ` ${system === undefined ? '-' : ratio(f(system), f(o))} |`).join('')}`,
  );
  return [head, rule, ...body].join('\n');
}

/** This system's figures by function. */
export function functionTable(row: PerWorkOrder): string {
  const head = '| function | requests | reads | writes | deletes | CPU ms |\n|---|---:|---:|---:|---:|---:|';
  const body = Object.entries(row.byFunction)
    .filter(([, f]) => f.requests + f.reads + f.writes + f.deletes + f.cpuMs > 0)
    .map(([fn, f]) => `| ${fn} | ${f.requests} | ${f.reads} | ${f.writes} | ${f.deletes} | ${f.cpuMs} |`);
  return [head, ...body].join('\n');
}

export const PRICE_NOTE = `Prices: list prices of ${PRICE_REGION} as of ${PRICES_AS_OF} (bench/cost/prices.ts), free tiers left out.`;
