/**
 * FEEL has an evaluation budget (issue 39): an expression whose work grows
 * with a variable, which a message may set, fails as any FEEL failure does
 * (the engine's EXPRESSION_FAILED), in bounded time and memory, instead of
 * holding the function for seconds or exhausting its memory.
 */
import { evaluateFeel, FEEL_MAX_TEXT, FEEL_MAX_VALUES, FEEL_TIME_LIMIT_MS } from '../../functions/src/bpmn/feel';

const timed = (expression: string, variables: Record<string, unknown>) => {
  const started = process.hrtime.bigint();
  const result = evaluateFeel(expression, variables);
  return { result, ms: Number(process.hrtime.bigint() - started) / 1e6 };
};

describe('a FEEL bomb from a variable fails, bounded', () => {
  test('a loop over a range as large as a message says: stopped at the time limit', () => {
    const { result, ms } = timed('count(for i in 1..n return i)', { n: 100_000_000 });
    expect(result).toEqual({
      ok: false,
      error: expect.stringMatching(new RegExp(`ran longer than ${FEEL_TIME_LIMIT_MS} ms`)) as unknown,
    });
    // The watchdog stops it where it is: well under a second, not the minutes the loop would take.
    expect(ms).toBeLessThan(FEEL_TIME_LIMIT_MS * 20);
  });

  test('a nested loop (a cartesian product of two ranges)', () => {
    const { result } = timed('count(for i in 1..n, j in 1..n return i + j)', { n: 1_000_000 });
    expect(result.ok).toBe(false);
  });

  test('a text that doubles every round: stopped by the size of what it builds or the time limit', () => {
    const { result } = timed('for i in 1..n return if i = 1 then "xxxxxxxx" else partial[-1] + partial[-1]', { n: 40 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/characters|ran longer|Invalid string length/);
  });

  test('a list of more values than a variable may hold', () => {
    const { result } = timed('for i in 1..n return i', { n: FEEL_MAX_VALUES + 10 });
    expect(result).toEqual({
      ok: false,
      error: expect.stringMatching(/more than 100000 items and entries|ran longer/) as unknown,
    });
  });

  test('a text longer than a document holds, made without a loop from a variable', () => {
    const big = 'x'.repeat(FEEL_MAX_TEXT / 2 + 1);
    const { result } = timed('a + a', { a: big });
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/more than 1048576 characters/) as unknown });
  });
});

describe('the expressions models are made of still evaluate', () => {
  test.each([
    ['sum(for x in items return x.price)', { items: [{ price: 2 }, { price: 3 }] }, 5],
    ['some x in items satisfies x.price > 2', { items: [{ price: 2 }, { price: 3 }] }, true],
    [
      'items[price > 2].name',
      {
        items: [
          { price: 2, name: 'a' },
          { price: 3, name: 'b' },
        ],
      },
      ['b'],
    ],
    ['string(amount) + " EUR"', { amount: 12 }, '12 EUR'],
    ['amount > 100 and customer.vip', { amount: 120, customer: { vip: true } }, true],
    ['count(for i in 1..n return i)', { n: 1_000 }, 1_000],
  ])('%s', (expression, variables, value) => {
    expect(evaluateFeel(expression, variables)).toEqual({ ok: true, value });
  });

  test('a failure inside the time limit still names its cause', () => {
    expect(evaluateFeel('sum(for x in items return x.price)', {})).toEqual({
      ok: false,
      error: expect.stringMatching(/Variable 'items' not found/) as unknown,
    });
  });
});
