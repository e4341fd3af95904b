/**
 * `npm run bench`: the three designs on the same emulators, workload and
 * faults, one after the other: (a) the naive receiver (correlate in the
 * handler, ack in the catch block), (b) correlate in the handler and nack on
 * error, with retry policy and dead-letter topic (the article's Variant 1),
 * (c) this system (store, ack, relay). The workload: N completions paced at
 * --rate, 1 % poison, 10 % overtaking their process by more than Pub/Sub's
 * retry window, 1 % meeting a double token, and Firestore cut for
 * --outage-ms once 40 % are out (0: no outage). Prints the table; writes
 * bench/results/three-way.json and three-way.svg.
 *
 * Flags: --n=5000 --rate=25 --outage-ms=5000 --late-start-ms=25000 --settle-ms=90000 --seed=1 --json
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { useEmulators } from '../../../tools/local/use-emulators';
import { barChart } from './chart';
import { argNumber } from './pool';
import { type DesignResult, runDesign } from './three-way/run-design';
import { planWorkload, WORKLOAD_SHARES } from './three-way/workload';

const N = argNumber('n', 5_000);
const RATE = argNumber('rate', 25);
const OUTAGE_MS = argNumber('outage-ms', 5_000, { zero: true });
const LATE_START_MS = argNumber('late-start-ms', 25_000, { zero: true });
const SEED = argNumber('seed', 1);
/** After the late starts, how long a design may take to account for every message. */
const SETTLE_MS = argNumber('settle-ms', 90_000);
const JSON_OUTPUT = process.argv.includes('--json');

const LABELS: Record<DesignResult['design'], string> = {
  naive: '(a) naive: ack in catch',
  nack: '(b) nack + dead-letter topic',
  system: '(c) this system',
};

function table(results: readonly DesignResult[]): string {
  const kept = (r: DesignResult): string =>
    r.design === 'system'
      ? Object.entries(r.parked)
          .map(([k, v]) => `PARKED ${k} ${v}`)
          .join(', ') || '0'
      : r.design === 'nack'
        ? `dead-lettered ${r.deadLettered} (no reason kept)`
        : '0';
  const rows: Array<[string, (r: DesignResult) => string]> = [
    ['messages', (r) => String(r.messages)],
    ['correlated', (r) => String(r.correlated)],
    ['lost (acked, no trace)', (r) => String(r.lost)],
    ['still redelivered at the end', (r) => String(r.unresolved)],
    ['parked / dead-lettered', kept],
    ['double correlations', (r) => String(r.doubleCorrelations)],
    ['throughput (correlated/s)', (r) => String(r.throughputPerS)],
    ['publish→correlated p50 ms', (r) => String(r.latencyP50Ms ?? '-')],
    ['publish→correlated p99 ms', (r) => String(r.latencyP99Ms ?? '-')],
    ['p99 ms, not overtaken', (r) => String(r.latencyP99NotOvertakenMs ?? '-')],
    ['Firestore reads+writes/msg', (r) => String(r.opsPerMessage)],
  ];
  const head = `| | ${results.map((r) => LABELS[r.design]).join(' | ')} |\n|---|${results.map(() => '---').join('|')}|`;
  return [head, ...rows.map(([name, f]) => `| ${name} | ${results.map(f).join(' | ')} |`)].join('\n');
}

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  const emulators = await useEmulators();
  const say = (line: string): void => {
    if (!JSON_OUTPUT) console.error(`[bench] ${line}`);
  };
  try {
    const results: DesignResult[] = [];
    for (const design of ['naive', 'nack', 'system'] as const) {
      const workload = planWorkload(N, SEED, `${design}${Date.now().toString(36)}`);
      results.push(
        await runDesign(design, workload, {
          firestoreHost: emulators.firestoreHost,
          pubsubHost: emulators.pubsubHost,
          rate: RATE,
          outageMs: OUTAGE_MS,
          lateStartMs: LATE_START_MS,
          settleTimeoutMs: SETTLE_MS,
          progress: say,
        }),
      );
      say(`${design}: done in ${results.at(-1)?.seconds ?? 0} s`);
    }
    // The latency targets: (c) against (a) in this run, p50 <= 1.5x and p99 of the not-overtaken <= 2x.
    const naive = results.find((r) => r.design === 'naive');
    const system = results.find((r) => r.design === 'system');
    const ratio = (a: number | null = null, b: number | null = null): number | null =>
      a === null || b === null || b === 0 ? null : Math.round((a / b) * 100) / 100;
    const latencyRatios = {
      p50: ratio(system?.latencyP50Ms, naive?.latencyP50Ms),
      p99NotOvertaken: ratio(system?.latencyP99NotOvertakenMs, naive?.latencyP99NotOvertakenMs),
    };
    const result = {
      latencyRatios,
      settings: {
        n: N,
        rate: RATE,
        outageMs: OUTAGE_MS,
        lateStartMs: LATE_START_MS,
        settleMs: SETTLE_MS,
        seed: SEED,
        shares: WORKLOAD_SHARES,
      },
      machine: {
        cpus: cpus().length,
        cpu: cpus()[0]?.model ?? 'unknown',
        memoryGb: Math.round(totalmem() / 2 ** 30),
        node: process.version,
      },
      at: new Date().toISOString(),
      results,
      table: table(results),
    };
    const dir = join(__dirname, 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'three-way.json'), `${JSON.stringify(result, null, 2)}\n`);
    const bars = results.flatMap((r) => [
      { label: `${r.design}: correlated`, value: r.correlated, group: 'correlated' },
      {
        label: `${r.design}: parked/dead-lettered`,
        value: r.messages - r.correlated - r.lost - r.unresolved,
        group: 'kept',
      },
      { label: `${r.design}: still redelivered`, value: r.unresolved, group: 'unresolved' },
      { label: `${r.design}: lost`, value: r.lost, group: 'lost' },
    ]);
    writeFileSync(
      join(dir, 'three-way.svg'),
      barChart(bars, {
        title: `What became of ${N} messages under the same faults (outage, overtaking, double token, poison)`,
        unit: 'msgs',
      }),
    );
    console.log(
      JSON_OUTPUT
        ? JSON.stringify(result, null, 2)
        : `${result.table}\n\nlatency (c)/(a): p50 ${latencyRatios.p50 ?? '-'} (target <= 1.5), p99 of the not overtaken ${latencyRatios.p99NotOvertaken ?? '-'} (target <= 2)\nbench/results/three-way.json, three-way.svg`,
    );
  } finally {
    await emulators.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
