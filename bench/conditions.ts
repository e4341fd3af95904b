/**
 * `npm run bench:conditions`: what FEEL costs against the engine's own
 * condition language, for conditions both can write, in one run on the same
 * machine (the ratio is the figure; the microseconds move with the load).
 * Each condition is parsed and evaluated over the same variables, in rounds
 * that alternate the two languages, so a noisy neighbour slows both alike.
 * Prints microseconds per parse and per evaluation, and FEEL / own. Also what
 * FEEL's time limit costs an expression that loops (it runs under V8's
 * watchdog, bpmn/feel.ts): such an expression through the
 * engine against the same one by feelin directly, alternating. Needs no
 * build, no emulator.
 *
 * Flags: --rounds=5 --n=2000 --json
 */
import { performance } from 'node:perf_hooks';
import { evaluate } from 'feelin';
import { conditionResult, evaluateCondition, parseAnyCondition, parseCondition } from '../functions/src/bpmn/condition';
import { evaluateFeel } from '../functions/src/bpmn/feel';

const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = found === undefined ? fallback : Number(found.slice(name.length + 3));
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a whole number above 0`);
  return value;
};

/** The same condition in both languages: a gateway's typical tests. */
const PAIRS: readonly (readonly [own: string, feel: string])[] = [
  ['amount > 10000', '=amount > 10000'],
  ["kind == 'EXPRESS'", '=kind = "EXPRESS"'],
  ["amount >= 500 && (kind == 'EXPRESS' || priority > 2)", '=amount >= 500 and (kind = "EXPRESS" or priority > 2)'],
  ['!(retries < 3) && approved == true', '=not(retries < 3) and approved = true'],
  ['review.score > 7', '=review.score > 7'],
];
const VARIABLES = { amount: 12_500, kind: 'EXPRESS', priority: 1, retries: 4, approved: true, review: { score: 8 } };

/** Expressions whose work grows with the values they meet: the engine evaluates them under its time limit. */
const GUARDED = [
  'count(for x in items return x) > 2',
  'some x in items satisfies x > 2',
  'every x in items satisfies x > 0',
];
const ITEMS = { items: [1, 2, 3] };

/** Microseconds per call of `fn` over `n` calls. */
function time(n: number, fn: () => unknown): number {
  const start = performance.now();
  for (let i = 0; i < n; i++) fn();
  return ((performance.now() - start) * 1000) / n;
}

function main(): void {
  const rounds = arg('rounds', 5);
  const n = arg('n', 2000);
  const own = PAIRS.map(([text]) => parseCondition(text));
  const feel = PAIRS.map(([, text]) => parseAnyCondition(text));
  // Both must agree on every pair, or the comparison is of different work.
  PAIRS.forEach(([text], i) => {
    const a = evaluateCondition(own[i]!, VARIABLES);
    const b = conditionResult(feel[i]!, VARIABLES);
    if (!b.ok || b.value !== a) throw new Error(`the two languages disagree on ${text}`);
  });
  const sums = { ownParse: 0, feelParse: 0, ownEval: 0, feelEval: 0, guarded: 0, direct: 0 };
  for (const text of GUARDED) {
    const engine = evaluateFeel(text, ITEMS);
    if (!engine.ok || engine.value !== evaluate(text, { ...ITEMS }).value)
      throw new Error(`the guarded evaluation differs on ${text}`);
  }
  for (let r = 0; r < rounds; r++) {
    sums.guarded += time(n, () => GUARDED.forEach((text) => evaluateFeel(text, ITEMS))) / GUARDED.length;
    sums.direct += time(n, () => GUARDED.forEach((text) => evaluate(text, { ...ITEMS }))) / GUARDED.length;
    sums.ownParse += time(n, () => PAIRS.forEach(([text]) => parseCondition(text))) / PAIRS.length;
    sums.feelParse += time(n, () => PAIRS.forEach(([, text]) => parseAnyCondition(text))) / PAIRS.length;
    sums.ownEval += time(n, () => own.forEach((c) => evaluateCondition(c, VARIABLES))) / PAIRS.length;
    sums.feelEval += time(n, () => feel.forEach((c) => conditionResult(c, VARIABLES))) / PAIRS.length;
  }
  const avg = (x: number): number => Math.round((x / rounds) * 100) / 100;
  const result = {
    conditions: PAIRS.length,
    calls: rounds * n * PAIRS.length,
    parseMicros: { own: avg(sums.ownParse), feel: avg(sums.feelParse) },
    evaluateMicros: { own: avg(sums.ownEval), feel: avg(sums.feelEval) },
    guardedMicros: { engine: avg(sums.guarded), feelin: avg(sums.direct) },
    ratio: {
      parse: Math.round((sums.feelParse / sums.ownParse) * 10) / 10,
      evaluate: Math.round((sums.feelEval / sums.ownEval) * 10) / 10,
      guarded: Math.round((sums.guarded / sums.direct) * 10) / 10,
    },
  };
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    [
      `conditions: ${result.conditions} (each in both languages), ${result.calls} calls per measure`,
      `parse:    own ${result.parseMicros.own} µs, FEEL ${result.parseMicros.feel} µs, FEEL / own ${result.ratio.parse}`,
      `evaluate: own ${result.evaluateMicros.own} µs, FEEL ${result.evaluateMicros.feel} µs, FEEL / own ${result.ratio.evaluate}`,
      `loops (${GUARDED.length}, under the time limit): engine ${result.guardedMicros.engine} µs, feelin directly ${result.guardedMicros.feelin} µs, engine / feelin ${result.ratio.guarded}`,
      '',
    ].join('\n'),
  );
}

main();
