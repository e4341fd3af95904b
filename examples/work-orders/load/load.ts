/**
 * `npm run test:load`: the receiver at concurrency 64 for 60 s with the
 * Firestore line cut for 10 s at 40 s. Prints the figures; exit 0 when no
 * error but the injected ones occurred, no document is missing or doubled and
 * RSS at the end is within 20 % of RSS after warm-up; 1 otherwise.
 */
import { Command } from 'commander';
import { numberIn, runMain } from '../../../tools/local/options';
import { runLoad } from './run-load';

async function main(): Promise<number> {
  const o = new Command('npm run test:load')
    .description(
      'The receiver under sustained load with injected Firestore outages: errors, missing and doubled documents, RSS.',
    )
    .option('--concurrency <n>', 'clients pushing at once', numberIn(1, 1_024, true), 64)
    .option('--duration-s <s>', 'how long the load lasts', numberIn(5, 3_600, true), 60)
    // The receiver's heap settles about 25 s into the load (RSS samples: 141, 185, 207, 227, then 227 to 250 MB for 100 s).
    .option('--warmup-s <s>', 'RSS baseline this long after the start', numberIn(1, 600, true), 30)
    // Longer than the receiver's 8 s write deadline: a shorter cut is ridden out by the client's own retries and shows as latency, not as 503s.
    .option('--fault-every-s <s>', 'cut the Firestore line this often (0: never)', numberIn(0, 600, true), 40)
    .option('--fault-ms <ms>', 'for this long', numberIn(100, 60_000, true), 10_000)
    .option('--json', 'print the result as JSON')
    .exitOverride()
    .parse(process.argv)
    .opts<{
      concurrency: number;
      durationS: number;
      warmupS: number;
      faultEveryS: number;
      faultMs: number;
      json?: boolean;
    }>();
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  const result = await runLoad({
    concurrency: o.concurrency,
    durationMs: o.durationS * 1_000,
    warmupMs: o.warmupS * 1_000,
    faultEveryMs: o.faultEveryS * 1_000,
    faultMs: o.faultMs,
    redeliveryRatio: 0.05,
    progress: (line) => {
      if (o.json !== true) console.error(`[load] ${line}`);
    },
  });
  if (o.json === true) console.log(JSON.stringify(result, null, 2));
  else {
    const errors = Object.entries(result.unexpected)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    console.log(
      `load: concurrency ${result.concurrency} for ${result.seconds} s, ${result.requests} requests (${result.requestsPerSecond}/s), ${result.messages} messages + ${result.redeliveries} redeliveries; ` +
        `injected errors ${result.injectedErrors} in ${result.faultWindows} outages, other errors ${errors === '' ? 0 : errors}; missing ${result.missing}, doubled ${result.doubled}; ` +
        `RSS ${result.rssAfterWarmupMb} MB after warm-up, ${result.rssAtEndMb} MB at the end (x${result.rssRatio}; every 5 s: ${result.rssSamplesMb.join(' ')}) ${result.ok ? 'PASS' : 'FAIL'}`,
    );
  }
  return result.ok ? 0 : 1;
}

runMain('load', main);
