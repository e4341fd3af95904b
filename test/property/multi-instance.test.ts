import fc from 'fast-check';
import { ITEMS_IN_FLIGHT, MAX_ITEMS } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { firstStarted, shardSize } from '../../functions/src/engine/items';
import { bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

/**
 * Properties of a multi-instance activity's start in the pure core: over any
 * collection length, parallel or sequential, the items the activity starts
 * at once stay within the window, and the shards' items (shard k: k, k +
 * shards, …, each started as the one before in its shard ends: store/items.ts)
 * are every item exactly once.
 */
const SEED = 20_261_206;

const model = (sequential: boolean) =>
  parseProcessModel(
    bpmnDocument(
      element('startEvent', 'start') +
        element(
          'serviceTask',
          'check',
          'inbox:async="true"',
          `<bpmn:multiInstanceLoopCharacteristics isSequential="${sequential}" inbox:collection="parts" />`,
        ) +
        element('endEvent', 'done') +
        chain('start', 'check', 'done'),
    ),
  );

test('every item belongs to exactly one shard, and the first ones started stay within the window', async () => {
  const models = { true: await model(true), false: await model(false) };
  fc.assert(
    fc.property(fc.integer({ min: 1, max: MAX_ITEMS }), fc.boolean(), (total, sequential) => {
      const sim = new CoreSim(models[String(sequential) as 'true' | 'false']);
      const t = sim.start({ parts: Array.from({ length: total }, (_, i) => i) });
      const items = sim.tokenAt('check').items;
      if (items === undefined) return false;
      const seen = new Set<number>();
      for (let shard = 0; shard < items.shards; shard++)
        for (let j = 0; j < shardSize(items, shard); j++) seen.add(shard + j * items.shards);
      const started = t.calls.map((c) => c.calledBy.item?.index ?? -1);
      const expectedStart = Array.from({ length: items.shards }, (_, s) => firstStarted(items, s)).reduce(
        (a, b) => a + b,
        0,
      );
      return (
        seen.size === total &&
        [...seen].every((i) => i >= 0 && i < total) &&
        started.length === expectedStart &&
        started.length <= (sequential ? 1 : ITEMS_IN_FLIGHT) &&
        new Set(started).size === started.length &&
        started.every((i) => seen.has(i))
      );
    }),
    { seed: SEED, numRuns: 200 },
  );
});
