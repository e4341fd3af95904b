/**
 * `npm run test:chaos`: the reliability promise under fire. Publishes the
 * plan's messages through the Pub/Sub emulator to a local stack with four
 * relays, kills relays mid-batch, restarts the Firestore emulator, fails
 * Cloud Tasks dispatches, has an operator repair (cancel-token, move-token,
 * requeue) and an approver complete user tasks while it goes on, then
 * prints one line: messages, DONE, PARKED by reason, lost, double
 * correlations, double invoices, the repairs, the second model's work
 * orders (through the join, the rounds of the error loop, the user tasks,
 * how "Ask the approvers" ended and what it collected). Exit 0 when nothing
 * was lost or done twice, 1 otherwise, 2 on a usage error. `--seed` replays
 * a run (the seed is in the line).
 */
import { Command } from 'commander';
import { numberIn, runMain } from '../../../tools/local/options';
import { DEFAULT_SIZES } from './plan';
import { runChaos } from './run';

async function main(): Promise<number> {
  const d = DEFAULT_SIZES;
  const options = new Command('npm run test:chaos')
    .description(
      'Chaos run of the transactional inbox on the local emulators; prints one line with what became of every message.',
    )
    .option('--seed <n>', 'random seed (a run replays from it); default: a new one', numberIn(0, 2 ** 31 - 1, true))
    .option('--orders <n>', 'work orders', numberIn(1, 100_000, true), d.orders)
    .option(
      '--messages <n>',
      'messages published in all (completions, duplicates, collisions, poison)',
      numberIn(1, 1_000_000, true),
      d.messages,
    )
    .option('--relay-kills <n>', 'relays SIGKILLed mid-batch', numberIn(0, 100, true), d.relayKills)
    .option(
      '--firestore-restarts <n>',
      'Firestore emulator stops and restarts',
      numberIn(0, 20, true),
      d.firestoreRestarts,
    )
    .option(
      '--dispatch-faults <n>',
      'bursts of failing Cloud Tasks dispatches and CreateTask calls',
      numberIn(0, 100, true),
      d.dispatchFaults,
    )
    .option(
      '--repairs <n>',
      "operator repairs while the run goes on (cancel-token, move-token, requeue; each a --dry-run, a pause, then the real run held to the dry run's --expect)",
      numberIn(0, 10_000, true),
      d.repairs,
    )
    .option(
      '--inspections <n>',
      'work orders on the second model (parallel fork and join, an error boundary loop, a user task, a multi-instance user task with a completion condition), of those that race nothing; default: a fifth of --orders',
      numberIn(0, 100_000, true),
    )
    .option('--down-ms <ms>', 'how long Firestore stays down at each restart', numberIn(0, 60_000, true), 3_000)
    .option(
      '--max-backlog <n>',
      'published but not yet stored documents before publishing pauses',
      numberIn(10, 100_000, true),
      200,
    )
    .option('--settle-timeout-s <s>', 'give up settling after this long', numberIn(10, 7_200, true), 900)
    .option('--json', 'print the result as JSON')
    .exitOverride()
    .parse(process.argv)
    .opts<{
      seed?: number;
      orders: number;
      messages: number;
      relayKills: number;
      firestoreRestarts: number;
      dispatchFaults: number;
      repairs: number;
      inspections?: number;
      downMs: number;
      maxBacklog: number;
      settleTimeoutS: number;
      json?: boolean;
    }>();
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const json = options.json === true;
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  // Interrupted: exit, which stops the functions (serve-function's exit hook) and the emulators (the harness's guard).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  const result = await runChaos({
    seed,
    orders: options.orders,
    messages: options.messages,
    relayKills: options.relayKills,
    firestoreRestarts: options.firestoreRestarts,
    dispatchFaults: options.dispatchFaults,
    repairs: options.repairs,
    inspections: options.inspections ?? Math.round(options.orders / 5),
    downMs: options.downMs,
    maxBacklog: options.maxBacklog,
    settleTimeoutMs: options.settleTimeoutS * 1_000,
    progress: (line) => {
      if (!json) console.error(`[chaos] ${line}`);
    },
  });
  if (json) console.log(JSON.stringify(result, null, 2));
  else {
    for (const v of result.counts.violations.slice(0, 20)) console.error(`[chaos] ${v}`);
    for (const f of result.faults) console.error(`[chaos] fault at step ${f.atStep}: ${f.kind}: ${f.note}`);
    console.log(result.line);
  }
  return result.ok ? 0 : 1;
}

runMain('chaos', main);
