/**
 * `npm run test:reference -- --runs 20000 --seed N`: the differential test
 * of test/property/reference-engine.test.ts (our engine against bpmn-engine
 * on generated models), as a longer run that does not stop at the first
 * difference. Prints one line: models generated, compared, refused at load
 * by ours, reference looped, differences by kind (known.ts's entries, and
 * the unexplained ones); then the report of the first few unexplained
 * differences, smallest model first. Exits 1 when any is unexplained. Needs
 * no build and no emulator; one core (run it alone on a small machine).
 *
 * With --store, the models of test/engine/reference-engine-store.test.ts
 * (call and multi-instance activities) run through our store on the
 * Firestore emulator: the one FIRESTORE_EMULATOR_HOST and
 * PUBSUB_EMULATOR_HOST name when they answer, else one started for the run.
 *
 * Flags: --runs 10000 (models), --seed N (default: the time), --show 3 (reports printed), --store.
 */
import '../test/support/reference/our-trace';
import fc from 'fast-check';
import { runBoth, type RunResult } from '../test/support/reference/compare';
import { draw } from '../test/support/reference/draw';
import type { Firestore } from '@google-cloud/firestore';
import { createFirestore } from '../functions/src/firestore';
import type { Graph } from '../test/support/reference/graph';
import { modelShape, storeModelShape } from '../test/support/reference/models';
import type { EngineDriver } from '../test/support/reference/outcome';
import { StoreDriver } from '../test/support/reference/store-driver';
import { useEmulators } from '../tools/local/use-emulators';
import { choicesArb } from '../test/support/reference/moves';
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

/** Our side of a store run: each model an instance of its own business key on the emulator. */
function storeRuns(db: Firestore): (graph: Graph) => Promise<EngineDriver> {
  let n = 0;
  return (graph) => StoreDriver.start(db, graph, `REF-${++n}`);
}

async function main(): Promise<void> {
  const runs = arg('runs', 10_000);
  const seed = arg('seed', Date.now() % 2_147_483_647);
  const show = arg('show', 3);
  const store = process.argv.includes('--store');
  const emulators = store ? await useEmulators() : null;
  const db = store ? createFirestore(`reference-${Date.now().toString(36)}`) : null;
  const ours = db === null ? undefined : storeRuns(db);
  const models = store ? storeModelShape() : modelShape();
  const tally = new Tally();
  const unexplained: { result: RunResult; why: string }[] = [];
  const started = Date.now();
  for (let done = 0, batch = 0; done < runs; batch++) {
    const n = Math.min(BATCH, runs - done);
    // One seed per batch, derived from the run's: the same --seed replays the same models.
    const samples = fc.sample(fc.tuple(models, choicesArb), { numRuns: n, seed: (seed + batch * 7919) | 0 });
    for (const [shape, choices] of samples) {
      const result = await runBoth(draw(shape), choices, ours === undefined ? {} : { ours });
      const verdict = judge(result);
      tally.add(result, verdict);
      if (!verdict.ok) unexplained.push({ result, why: verdict.why });
    }
    done += n;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  await db?.terminate();
  await emulators?.stop();
  console.log(`reference engine${store ? ' through the store' : ''} (seed ${seed}, ${seconds} s): ${tally.line()}`);
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
