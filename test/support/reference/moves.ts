/** The moves of a run: which wait completes next, and with what. */
import fc from 'fast-check';
import { errorCode } from './generate';
import type { Choice } from './outcome';
import { FLAGS, type Flag } from './shapes';

/** One move's choice: which wait, the variables it sets, and (a quarter of the time) the BPMN error a job throws. */
export const choiceArb: fc.Arbitrary<Choice> = fc.record({
  pick: fc.nat({ max: 1000 }),
  vars: fc
    .record(Object.fromEntries(FLAGS.map((f) => [f, fc.boolean()])) as Record<Flag, fc.Arbitrary<boolean>>, {
      requiredKeys: [],
    })
    .map((vars) => vars as Readonly<Record<string, boolean>>),
  error: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: errorCode, weight: 1 }),
  done: fc.boolean(),
});

export const choicesArb: fc.Arbitrary<Choice[]> = fc.array(choiceArb, { maxLength: 16 });
