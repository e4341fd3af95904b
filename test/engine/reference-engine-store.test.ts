import fc from 'fast-check';
import { runBoth } from '../support/reference/compare';
import { draw } from '../support/reference/draw';
import { KNOWN_CASES } from '../support/reference/known-cases';
import { storeModelShape } from '../support/reference/models';
import { choicesArb } from '../support/reference/moves';
import { report } from '../support/reference/report';
import { StoreDriver } from '../support/reference/store-driver';
import { judge, Tally } from '../support/reference/tally';
import { freshFirestores } from '../support/firestore';

/**
 * Our engine against bpmn-engine on generated models with call activities
 * and multi-instance activities (sequential and parallel, with and without
 * completion conditions, items that wait and items that do not, and the
 * shapes of defects 2 and 7), which run through the Firestore store on the
 * emulator: a called instance and each item are instances of their own. The
 * comparison is test/property/reference-engine.test.ts's (paths passed and
 * end state, or a difference known.ts lists).
 */
const SEED = 20_261_209;
const RUNS = 50;
const fresh = freshFirestores();
const { db } = fresh.project('reference-engine');
let runs = 0;

describe('our engine through the store against bpmn-engine', () => {
  test(`${RUNS} generated models with call and multi-instance activities agree, or differ only as known.ts lists`, async () => {
    const tally = new Tally();
    await fc.assert(
      fc.asyncProperty(storeModelShape(), choicesArb, async (shape, choices) => {
        runs += 1;
        const result = await runBoth(draw(shape), choices, {
          ours: (graph) => StoreDriver.start(db, graph, `REF-${runs}`),
        });
        const verdict = judge(result);
        tally.add(result, verdict);
        if (!verdict.ok) throw new Error(report(result, verdict.why));
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(`reference engine through the store (seed ${SEED}): ${tally.line()}`);
    expect(tally.agreed).toBeGreaterThan(RUNS * 0.5);
  }, 600_000);

  test('each known difference of call and multi-instance activities still happens on its smallest model', async () => {
    for (const known of KNOWN_CASES.filter((c) => c.store === true)) {
      runs += 1;
      const result = await runBoth(draw(known.shape), known.moves, {
        ours: (graph) => StoreDriver.start(db, graph, `REF-${runs}`),
      });
      const verdict = judge(result);
      const tolerated = verdict.ok ? verdict.known?.id : undefined;
      // The run's report when it is not the known difference, so a failure shows what happened instead.
      expect({ id: known.id, tolerated, report: tolerated === known.id ? '' : report(result) }).toEqual({
        id: known.id,
        tolerated: known.id,
        report: '',
      });
    }
  });
});
