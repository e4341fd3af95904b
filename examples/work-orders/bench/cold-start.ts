/**
 * `npm run bench:cold-start`: each deployed function's start-up in a fresh
 * process, median of 10, against a bare Functions Framework hello function:
 *
 * - cold start: from spawning the Functions Framework CLI (as Cloud Run
 *   does) to the first HTTP answer; the ratio to hello is judged (target for
 *   the receiver: at most 1.5);
 * - import: requiring the entry module alone, and which heavy packages that
 *   loaded (the receiver must not load Firestore, Pub/Sub or Cloud Tasks
 *   before its first request).
 *
 * Rounds alternate the functions, so drift on a shared machine hits all
 * alike. Writes bench/results/cold-start.json and cold-start.svg.
 *
 * Flags: --runs=10 --json
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { argNumber } from './pool';
import { firstAnswer } from './first-answer';
import { barChart } from './chart';
import { errorMessage } from '../../../functions/src/core/errors';

const ROOT = join(__dirname, '..');
const RUNS = argNumber('runs', 10);
const TARGETS = [
  'receivePubSubPush',
  'receiveDeadLetter',
  'startProcess',
  'runJob',
  'fireTimer',
  'sweepJobs',
  'relayInbox',
] as const;
/** A production-like environment: push auth on, a Cloud Tasks target; nothing is contacted during import. */
const ENV = {
  GOOGLE_CLOUD_PROJECT: 'bench-cold-start',
  INBOX_PUSH_AUTH: 'enabled',
  INBOX_PUSH_AUDIENCE: 'https://europe-west1-bench.cloudfunctions.net/receivePubSubPush',
  INBOX_PUSH_SERVICE_ACCOUNTS: 'pubsub-push@bench.iam.gserviceaccount.com',
  INBOX_RUN_JOB_URL: 'https://europe-west1-bench.cloudfunctions.net/runJob',
  INBOX_FIRE_TIMER_URL: 'https://europe-west1-bench.cloudfunctions.net/fireTimer',
  INBOX_RELAY_URL: 'https://europe-west1-bench.cloudfunctions.net/relayInbox',
  INBOX_TASKS_SERVICE_ACCOUNT: 'tasks@bench.iam.gserviceaccount.com',
};

interface Sample {
  readonly importMs: number;
  readonly modules: number;
  readonly heavy: readonly string[];
}

const childEnv = (target: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '',
  ...ENV,
  FUNCTION_TARGET: target,
  METADATA_SERVER_DETECTION: 'none',
});

function once(entry: string, target: string): Sample {
  const out = execFileSync(process.execPath, [join(__dirname, 'cold-start-child.js'), entry], {
    cwd: ROOT,
    env: childEnv(target),
    encoding: 'utf8',
  });
  return JSON.parse(out) as Sample;
}

const firstAnswerOf = (source: string, target: string): Promise<number> =>
  firstAnswer(ROOT, source, target, childEnv(target));

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

async function main(): Promise<void> {
  const helloFile = join(ROOT, 'bench', 'fixtures', 'hello.js');
  const subjects = [
    { name: 'hello (bare Functions Framework)', entry: helloFile, source: helloFile, target: 'hello' },
    ...TARGETS.map((t) => ({ name: t, entry: join(ROOT, 'dist', 'index.js'), source: ROOT, target: t })),
  ];
  const samples = new Map<string, Sample[]>(subjects.map((s) => [s.name, []]));
  const starts = new Map<string, number[]>(subjects.map((s) => [s.name, []]));
  once(helloFile, 'hello'); // warm the file system cache once
  await firstAnswerOf(helloFile, 'hello');
  for (let round = 0; round < RUNS; round++) {
    const order = round % 2 === 0 ? subjects : [...subjects].reverse();
    for (const s of order) {
      samples.get(s.name)?.push(once(s.entry, s.target));
      starts.get(s.name)?.push(await firstAnswerOf(s.source, s.target));
    }
  }
  const helloStart = median(starts.get(subjects[0]?.name ?? '') ?? []);
  const helloImport = median((samples.get(subjects[0]?.name ?? '') ?? []).map((s) => s.importMs));
  const round1 = (v: number): number => Math.round(v * 10) / 10;
  const rows = subjects.map((s) => {
    const list = samples.get(s.name) ?? [];
    const startMs = median(starts.get(s.name) ?? []);
    const importMs = median(list.map((x) => x.importMs));
    return {
      function: s.name,
      coldStartMsMedian: round1(startMs),
      ratioToHello: Math.round((startMs / helloStart) * 100) / 100,
      importMsMedian: round1(importMs),
      importRatioToHello: Math.round((importMs / helloImport) * 10) / 10,
      modules: list[0]?.modules ?? 0,
      heavyPackages: list[0]?.heavy ?? [],
    };
  });
  const receiver = rows.find((r) => r.function === 'receivePubSubPush');
  const result = {
    runs: RUNS,
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
    at: new Date().toISOString(),
    rows,
    receiverRatio: receiver?.ratioToHello ?? null,
    target: 1.5,
    pass: (receiver?.ratioToHello ?? Infinity) <= 1.5,
  };
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cold-start.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(
    join(dir, 'cold-start.svg'),
    barChart(
      rows.map((r) => ({
        label: r.function.replace(' (bare Functions Framework)', ''),
        value: r.ratioToHello,
        group: r.function.startsWith('hello') ? 'baseline' : 'function',
      })),
      {
        title: `Cold start to first answer, ratio to a bare Functions Framework function (median of ${RUNS})`,
        unit: 'x',
        target: { value: 1.5, label: 'target 1.5x (receiver)' },
      },
    ),
  );
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  console.log(
    `cold start in a fresh process, median of ${RUNS} (node ${process.version}, ${cpus().length} CPUs): spawn to first answer, and the entry module's import alone`,
  );
  console.log(
    'function                          start ms  x hello  import ms  x hello  modules  heavy packages at import',
  );
  for (const r of rows) {
    console.log(
      `${r.function.padEnd(34)}${String(r.coldStartMsMedian).padStart(8)}  ${r.ratioToHello.toFixed(2).padStart(7)}  ${String(r.importMsMedian).padStart(9)}  ${r.importRatioToHello.toFixed(1).padStart(7)}  ${String(r.modules).padStart(7)}  ${r.heavyPackages.join(', ') || '-'}`,
    );
  }
  console.log(
    `receiver ratio ${result.receiverRatio ?? '?'} (target <= 1.5): ${result.pass ? 'PASS' : 'FAIL'}; bench/results/cold-start.json, cold-start.svg`,
  );
}

main().catch((err: unknown) => {
  console.error(errorMessage(err));
  process.exitCode = 1;
});
