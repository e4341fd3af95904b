/**
 * `npm run bench:conditions`: what FEEL costs against the engine's own
 * condition language, for conditions both can write, in one run on the same
 * machine (the ratio is the figure; the microseconds move with the load).
 * Each condition is parsed and evaluated over the same variables, in rounds
 * that alternate the two languages, so a noisy neighbour slows both alike.
 * Prints microseconds per parse and per evaluation, and FEEL / own. Needs no
 * build, no emulator.
 *
 * Flags: --rounds=5 --n=2000 --json
 */
import { performance } from 'node:perf_hooks';
import { conditionResult, evaluateCondition, parseAnyCondition, parseCondition } from '../functions/src/bpmn/condition';

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
  const sums = { ownParse: 0, feelParse: 0, ownEval: 0, feelEval: 0 };
  for (let r = 0; r < rounds; r++) {
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
    ratio: {
      parse: Math.round((sums.feelParse / sums.ownParse) * 10) / 10,
      evaluate: Math.round((sums.feelEval / sums.ownEval) * 10) / 10,
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
      '',
    ].join('\n'),
  );
}

main();
