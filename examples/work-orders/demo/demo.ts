/**
 * `npm run demo`: starts the local stack (or uses a running `npm start`),
 * replays the article's failure modes with N work orders, and prints a report:
 * per scenario the expected and observed outcome, totals by status and
 * reason, and the invariants. Exits 1 when a scenario or an invariant fails,
 * 2 on a usage error. `--json` prints the report as JSON for scripts.
 */
import { Firestore } from '@google-cloud/firestore';
import { PubSub } from '@google-cloud/pubsub';
import { Storage } from '@google-cloud/storage';
import { SingleBar } from 'cli-progress';
import { Command } from 'commander';
import { controlClient, findRunningStack, type StackControl } from '../../../tools/local/control';
import { numberIn, runMain } from '../../../tools/local/options';
import { startLocalStack } from '../../../tools/local/stack';
import { MIN_ORDERS } from './plan';
import { formatReport } from './report';
import { runDemo } from './run';
import { WORK_ORDERS_APP } from '../local/names';

async function main(): Promise<number> {
  const options = new Command('npm run demo')
    .description("Replay the article's failure modes on the local emulators and report what became of every message.")
    .option('--orders <n>', 'work orders in the run', numberIn(MIN_ORDERS, 5_000, true), 200)
    .option('--outage-ms <ms>', 'how long Firestore stays down', numberIn(0, 60_000, true), 3_000)
    .option('--phase-timeout-s <s>', 'give up on a phase after this long', numberIn(10, 3_600, true), 90)
    .option('--json', 'print the report as JSON')
    .exitOverride()
    .parse(process.argv)
    .opts<{ orders: number; outageMs: number; phaseTimeoutS: number; json?: boolean }>();
  const json = options.json === true;
  const say = (line: string): void => {
    if (!json) console.error(line);
  };

  const running = await findRunningStack();
  const stack =
    running === null ? await startLocalStack({ app: WORK_ORDERS_APP, progress: (l) => say(`[stack] ${l}`) }) : null;
  const control: StackControl = stack ?? controlClient(running ?? '');
  if (running !== null) say(`[demo] using the running stack at ${running}`);
  const info = await control.info();
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  // The operator CLI's commands run in this process, against this stack's emulators.
  process.env.FIRESTORE_EMULATOR_HOST = info.firestoreHost;
  process.env.GOOGLE_CLOUD_PROJECT = info.projectId;
  // `inbox show` reads claims' objects: the storage client takes the emulator from here.
  process.env.STORAGE_EMULATOR_HOST = info.storageUrl;
  const db = new Firestore({
    projectId: info.projectId,
    host: info.firestoreHost,
    ssl: false,
    customHeaders: { Authorization: 'Bearer owner' },
  });
  const pubsub = new PubSub({ projectId: info.projectId, apiEndpoint: info.pubsubHost });
  const storage = new Storage({ projectId: info.projectId, apiEndpoint: info.storageUrl });
  const bar =
    !json && process.stderr.isTTY === true
      ? new SingleBar({ stream: process.stderr, format: '{bar} {value}/{total} work orders as expected · {phase}' })
      : null;
  let lastPhase = '';
  try {
    bar?.start(options.orders, 0, { phase: 'starting' });
    const result = await runDemo({
      info,
      control,
      db,
      pubsub,
      storage,
      options: {
        orders: options.orders,
        outageMs: options.outageMs,
        phaseTimeoutMs: options.phaseTimeoutS * 1_000,
        progress: (done, total, phase) => {
          if (bar !== null) {
            if (total > 0) bar.update(done, { phase });
            else bar.update({ phase });
          } else if (phase !== lastPhase) say(`[demo] ${phase}`);
          lastPhase = phase;
        },
      },
    });
    bar?.stop();
    console.log(json ? JSON.stringify(result, null, 2) : `\n${formatReport(result)}`);
    say(
      stack === null
        ? `[demo] see what became of every message in the operator console: ${info.consoleUrl}`
        : `[demo] the operator console was ${info.consoleUrl}; it stops with this run: start \`npm start\` first to keep the stack and look at the result there`,
    );
    return result.ok ? 0 : 1;
  } finally {
    bar?.stop();
    await pubsub.close();
    await db.terminate();
    await stack?.stop();
  }
}

runMain('demo', main);
