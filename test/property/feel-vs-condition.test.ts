import fc from 'fast-check';
import {
  conditionResult,
  evaluateCondition,
  parseAnyCondition,
  parseCondition,
} from '../../functions/src/bpmn/condition';

/**
 * The engine's own condition language (bpmn/condition.ts) and FEEL
 * (bpmn/feel.ts, Camunda 8's `=…`) agree on every condition both can write:
 * comparisons of a variable with a literal, `&&`/`and`, `||`/`or`, `!`/`not(…)`
 * and parentheses. A model moved from one syntax to the other takes the
 * same branch.
 *
 * Every variable the expression reads is present and holds a value of the
 * kind it is compared with (numbers with numbers, strings with strings).
 * That is the whole of the overlap, on purpose: FEEL fails on a missing
 * variable or on values that do not compare (the engine's incident, by
 * design: feel.ts), where the own language answers false (`x > 1` with x
 * missing) or true (`x != 1`); those differences are documented, not
 * tested here.
 */

const SEED = 20_261_214;

type Own = '==' | '!=' | '<' | '<=' | '>' | '>=';
type Expr =
  | { readonly kind: 'number'; readonly variable: string; readonly op: Own; readonly value: number }
  | { readonly kind: 'string'; readonly variable: string; readonly op: '==' | '!='; readonly value: string }
  | { readonly kind: 'and' | 'or'; readonly left: Expr; readonly right: Expr; readonly paren: boolean }
  | { readonly kind: 'not'; readonly operand: Expr };

const NUMBER_VARIABLES = ['a', 'b', 'x'] as const;
const STRING_VARIABLES = ['s', 'status'] as const;
/** Halves from -10 to 10: literals and values meet often, and decimals are written as both languages read them. */
const number = fc.integer({ min: -20, max: 20 }).map((n) => n / 2 + 0);
const text = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', ' ', 'é'), maxLength: 3 });

const { expr } = fc.letrec<{ expr: Expr }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({
      kind: fc.constant('number' as const),
      variable: fc.constantFrom(...NUMBER_VARIABLES),
      op: fc.constantFrom<Own>('==', '!=', '<', '<=', '>', '>='),
      value: number,
    }),
    fc.record({
      kind: fc.constant('string' as const),
      variable: fc.constantFrom(...STRING_VARIABLES),
      op: fc.constantFrom<'==' | '!='>('==', '!='),
      value: text,
    }),
    fc.record({
      kind: fc.constantFrom('and' as const, 'or' as const),
      left: tie('expr'),
      right: tie('expr'),
      paren: fc.boolean(),
    }),
    fc.record({ kind: fc.constant('not' as const), operand: tie('expr') }),
  ),
}));

const variables = fc.record({
  a: number,
  b: number,
  x: number,
  s: text,
  status: text,
});

/** A number as both languages write it: `-2.5`, `3`. */
const literal = (n: number): string => String(n);

/**
 * Both renderings of `e`. `&&` binds tighter than `||` in both languages, so
 * an `or` under an `and` is parenthesised; any other binary node is when its
 * `paren` says so.
 */
function render(e: Expr, parent: 'and' | 'or' | 'not' | null = null): { own: string; feel: string } {
  switch (e.kind) {
    case 'number':
      return {
        own: `${e.variable} ${e.op} ${literal(e.value)}`,
        feel: `${e.variable} ${e.op === '==' ? '=' : e.op} ${literal(e.value)}`,
      };
    case 'string':
      return {
        own: `${e.variable} ${e.op} '${e.value}'`,
        feel: `${e.variable} ${e.op === '==' ? '=' : '!='} "${e.value}"`,
      };
    case 'not': {
      const inner = render(e.operand, 'not');
      // `!` takes one operand in the own language: a comparison or a parenthesised condition.
      return { own: `!(${inner.own})`, feel: `not(${inner.feel})` };
    }
    case 'and':
    case 'or': {
      const left = render(e.left, e.kind);
      const right = render(e.right, e.kind);
      const own = `${left.own} ${e.kind === 'and' ? '&&' : '||'} ${right.own}`;
      const feel = `${left.feel} ${e.kind} ${right.feel}`;
      return e.paren || (e.kind === 'or' && parent === 'and') ? { own: `(${own})`, feel: `(${feel})` } : { own, feel };
    }
  }
}

test('rendered both ways, a condition gives the same answer in the own language and in FEEL', () => {
  fc.assert(
    fc.property(expr, variables, (e, vars) => {
      const { own, feel } = render(e);
      const expected = evaluateCondition(parseCondition(own), vars);
      expect({ own, feel, result: conditionResult(parseAnyCondition(`=${feel}`), vars) }).toEqual({
        own,
        feel,
        result: { ok: true, value: expected },
      });
    }),
    { seed: SEED, numRuns: 1_000 },
  );
});

test('the renderings read as intended (examples)', () => {
  const e: Expr = {
    kind: 'and',
    paren: false,
    left: { kind: 'number', variable: 'x', op: '>', value: 3 },
    right: {
      kind: 'or',
      paren: false,
      left: { kind: 'number', variable: 'a', op: '==', value: 2 },
      right: { kind: 'string', variable: 's', op: '!=', value: 'ab' },
    },
  };
  expect(render(e)).toEqual({ own: "x > 3 && (a == 2 || s != 'ab')", feel: 'x > 3 and (a = 2 or s != "ab")' });
  const vars = { x: 4, a: 1, s: 'ab' };
  expect(evaluateCondition(parseCondition(render(e).own), vars)).toBe(false);
  expect(conditionResult(parseAnyCondition(`=${render(e).feel}`), vars)).toEqual({ ok: true, value: false });
});
