/**
 * `npm run test:reference -- --runs 20000 --seed N`: the differential test
 * of test/property/reference-engine.test.ts (our engine against bpmn-engine
 * on generated models), as a longer run that does not stop at the first
 * difference. Prints one line: models generated, compared, refused at load
 * by ours, reference looped, differences by kind (known.ts's entries, and
 * the unexplained ones); then the report of the first few unexplained
 * differences, smallest model first. Exits 1 when any is unexplained. Needs
 * no build, no emulator; one core (run it alone on a small machine).
 *
 * Flags: --runs 10000 (models), --seed N (default: the time), --show 3 (reports printed).
 */
import '../test/support/reference/our-trace';
import fc from 'fast-check';
import { runBoth, type RunResult } from '../test/support/reference/compare';
import { draw } from '../test/support/reference/draw';
import { choicesArb, modelShape } from '../test/support/reference/generate';
import { report } from '../test/support/reference/report';
import { judge, Tally } from '../test/support/reference/tally';

function arg(name: string, fallback: number): number {
  const at = process.argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (at < 0) return fallback;
  const flag = process.argv[at] as string;
  const raw = flag.includes('=') ? flag.slice(flag.indexOf('=') + 1) : process.argv[at + 1];
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`--${name} must be a whole number, not ${raw ?? 'nothing'}`);
  return value;
}

/** Models generated in batches: fast-check's sample is an array. */
const BATCH = 500;

async function main(): Promise<void> {
  const runs = arg('runs', 10_000);
  const seed = arg('seed', Date.now() % 2_147_483_647);
  const show = arg('show', 3);
  const tally = new Tally();
  const unexplained: { result: RunResult; why: string }[] = [];
  const started = Date.now();
  for (let done = 0, batch = 0; done < runs; batch++) {
    const n = Math.min(BATCH, runs - done);
    // One seed per batch, derived from the run's: the same --seed replays the same models.
    const samples = fc.sample(fc.tuple(modelShape(), choicesArb), { numRuns: n, seed: (seed + batch * 7919) | 0 });
    for (const [shape, choices] of samples) {
      const result = await runBoth(draw(shape), choices);
      const verdict = judge(result);
      tally.add(result, verdict);
      if (!verdict.ok) unexplained.push({ result, why: verdict.why });
    }
    done += n;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`reference engine (seed ${seed}, ${seconds} s): ${tally.line()}`);
  if (tally.refused > 0)
    console.log(
      `refusals: ${[...tally.refusals.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([why, n]) => `${n}× ${why}`)
        .join('; ')}`,
    );
  const smallest = unexplained.sort((a, b) => a.result.graph.nodes.length - b.result.graph.nodes.length);
  for (const { result, why } of smallest.slice(0, show)) console.log(`\n${report(result, why)}`);
  process.exitCode = unexplained.length > 0 ? 1 : 0;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 2;
});
