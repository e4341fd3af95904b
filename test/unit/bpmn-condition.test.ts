import { evaluateCondition, parseCondition } from '../../functions/src/bpmn/condition';
import type { Condition } from '../../functions/src/bpmn/model';

const cmp = (
  variable: string,
  op: '==' | '!=' | '<' | '<=' | '>' | '>=',
  value: string | number | boolean | null,
): Condition => ({ kind: 'compare', variable, op, value });

describe('parseCondition', () => {
  const parsed: Array<[string, Condition]> = [
    ['${completedItems > 0}', cmp('completedItems', '>', 0)],
    ['completedItems > 0', cmp('completedItems', '>', 0)],
    ['  ${ a>=1.5 }  ', cmp('a', '>=', 1.5)],
    ['a <= -2', cmp('a', '<=', -2)],
    ['a < -0.25', cmp('a', '<', -0.25)],
    ['a==-1', cmp('a', '==', -1)],
    ['order.total != 10', cmp('order.total', '!=', 10)],
    ["status == 'DONE'", cmp('status', '==', 'DONE')],
    ['status == "DONE"', cmp('status', '==', 'DONE')],
    ["s == 'it\\'s'", cmp('s', '==', "it's")],
    ['s == "say \\"hi\\""', cmp('s', '==', 'say "hi"')],
    ["s == 'a\\\\b'", cmp('s', '==', 'a\\b')],
    ["s == '}'", cmp('s', '==', '}')],
    ['${s == "}"}', cmp('s', '==', '}')],
    ["s == ''", cmp('s', '==', '')],
    ['flag == true', cmp('flag', '==', true)],
    ['flag != false', cmp('flag', '!=', false)],
    ['x == null', cmp('x', '==', null)],
    ['_x1 == 1', cmp('_x1', '==', 1)],
    ['a == 1 && b == 2', { kind: 'and', left: cmp('a', '==', 1), right: cmp('b', '==', 2) }],
    // && binds tighter than ||.
    [
      'a == 1 || b == 2 && c == 3',
      {
        kind: 'or',
        left: cmp('a', '==', 1),
        right: { kind: 'and', left: cmp('b', '==', 2), right: cmp('c', '==', 3) },
      },
    ],
    [
      'a == 1 && b == 2 || c == 3',
      {
        kind: 'or',
        left: { kind: 'and', left: cmp('a', '==', 1), right: cmp('b', '==', 2) },
        right: cmp('c', '==', 3),
      },
    ],
    [
      '(a == 1 || b == 2) && c == 3',
      {
        kind: 'and',
        left: { kind: 'or', left: cmp('a', '==', 1), right: cmp('b', '==', 2) },
        right: cmp('c', '==', 3),
      },
    ],
    // ! binds tighter than &&.
    ['!a == 1 && b == 2', { kind: 'and', left: { kind: 'not', operand: cmp('a', '==', 1) }, right: cmp('b', '==', 2) }],
    [
      '!(a == 1 && b == 2)',
      { kind: 'not', operand: { kind: 'and', left: cmp('a', '==', 1), right: cmp('b', '==', 2) } },
    ],
    ['!!a == 1', { kind: 'not', operand: { kind: 'not', operand: cmp('a', '==', 1) } }],
    [
      'a == 1 || b == 2 || c == 3',
      { kind: 'or', left: { kind: 'or', left: cmp('a', '==', 1), right: cmp('b', '==', 2) }, right: cmp('c', '==', 3) },
    ],
  ];
  test.each(parsed)('%s', (text, expected) => {
    expect(parseCondition(text)).toEqual(expected);
  });

  const bad: Array<[string, string]> = [
    ['', 'empty condition at position 1'],
    ['${}', 'empty condition at position 3'],
    ['${a == 1', "missing closing '}' of '${'"],
    ['a', 'expected a comparison (== != < <= > >=) after a but found end of condition at position 2'],
    [
      'a == ',
      'expected a literal (number, string, true, false, null) after == but found end of condition at position 6',
    ],
    ['a = 1', 'unexpected character "=" at position 3'],
    ['a === 1', 'unexpected character "=" at position 5'],
    ['a == b', 'expected a literal (number, string, true, false, null) after == but found b at position 6'],
    ['1 == a', 'expected a variable name but found 1 at position 1'],
    ['true == a', 'expected a variable name but found true at position 1'],
    ['a == 1 &&', 'expected a variable name but found end of condition at position 10'],
    ['a == 1 b == 2', 'unexpected b at position 8'],
    ['(a == 1', "expected ')' to close the '(' at position 1 but found end of condition at position 8"],
    ['a == 1)', 'unexpected ) at position 7'],
    ["a == 'open", 'unterminated string at position 6'],
    ["a == 'x\\n'", 'unsupported escape \\n'],
    ['a == 1.', 'malformed number'],
    ['a == 1x', 'malformed number'],
    ['a == +1', 'unexpected character "+" at position 6'],
    ['a & b', 'unexpected character "&"'],
    ["a < 'x'", "< compares numbers only, not 'x' at position 5"],
    ['a >= null', '>= compares numbers only, not null'],
    ['a > true', '> compares numbers only, not true'],
    ['a == 1 ; process.exit()', 'unexpected character ";"'],
    ['a.b. == 1', 'unexpected character "."'],
    ['a == 1' + '0'.repeat(400), 'out of range'],
    ['('.repeat(40) + 'a == 1' + ')'.repeat(40), 'nested deeper than 32 levels'],
    ['!'.repeat(40) + 'a == 1', 'nested deeper than 32 levels'],
    ['a == 1 && '.repeat(500) + 'a == 1', 'longer than 4096 characters'],
  ];
  test.each(bad)('rejects %j', (text, message) => {
    expect(() => parseCondition(text)).toThrow(message);
  });

  test('messages quote the condition and give a 1-based position', () => {
    expect(() => parseCondition('${a == 1 || }')).toThrow(
      'invalid condition "${a == 1 || }": expected a variable name but found end of condition at position 13',
    );
  });
});

describe('evaluateCondition', () => {
  const vars = {
    completedItems: 3,
    zero: 0,
    status: 'DONE',
    flag: true,
    nothing: null,
    text: '10',
    nan: Number.NaN,
    order: { total: 120.5, customer: { tier: 'gold' } },
    list: [1, 2],
  };
  const table: Array<[string, boolean]> = [
    ['completedItems > 0', true],
    ['completedItems >= 3', true],
    ['completedItems < 3', false],
    ['completedItems <= 3', true],
    ['zero > 0', false],
    ['completedItems == 3', true],
    ['completedItems != 3', false],
    ["status == 'DONE'", true],
    ["status != 'OPEN'", true],
    ['flag == true', true],
    ['flag == false', false],
    ['nothing == null', true],
    // Missing variables: == null holds, != is its negation, ordering never holds.
    ['missing == null', true],
    ['missing != null', false],
    ["missing != 'DONE'", true],
    ['missing > 0', false],
    ['missing < 0', false],
    ['!(missing > 0)', true],
    // No coercion.
    ['text == 10', false],
    ["completedItems == '3'", false],
    ['text > 9', false],
    ['flag == 1', false],
    ['nothing == 0', false],
    ['zero == false', false],
    ['zero == null', false],
    ['nan == null', false],
    ['nan >= 0', false],
    ['nan <= 0', false],
    ['nan != 0', true],
    ['order > 0', false],
    ['order == null', false],
    // Dotted paths, own properties only.
    ['order.total > 100', true],
    ["order.customer.tier == 'gold'", true],
    ['order.customer.missing == null', true],
    ['status.length == 4', false],
    ['list.length == 2', true],
    ['completedItems.toFixed == null', true],
    ['__proto__ == null', true],
    ['constructor == null', true],
    ['order.constructor == null', true],
    ['order.__proto__ == null', true],
    ['toString == null', true],
    ['hasOwnProperty == null', true],
    // Combinations and precedence.
    ["completedItems > 0 && status == 'DONE'", true],
    ["completedItems > 5 || status == 'DONE'", true],
    ['completedItems > 5 || zero > 0', false],
    ['zero > 0 || flag == true && status == null', false],
    ['(zero > 0 || flag == true) && status != null', true],
    ['!flag == true', false],
    ['!flag == true || !zero > 0', true],
    ['!!flag == true', true],
  ];
  test.each(table)('%s → %s', (text, expected) => {
    expect(evaluateCondition(parseCondition(text), vars)).toBe(expected);
  });

  test('an object with a null prototype and own keys named like prototype members', () => {
    const own = Object.assign(Object.create(null) as Record<string, unknown>, { constructor: 'mine' });
    expect(evaluateCondition(parseCondition("constructor == 'mine'"), own)).toBe(true);
    expect(evaluateCondition(parseCondition("x.constructor == 'mine'"), { x: own })).toBe(true);
    expect(
      evaluateCondition(
        parseCondition("x.__proto__ == 'p'"),
        JSON.parse('{"x":{"__proto__":"p"}}') as Record<string, unknown>,
      ),
    ).toBe(true);
  });

  test('never throws on odd values', () => {
    const odd = { a: Symbol('s'), b: 10n, c: () => 1, d: new Date(0) };
    for (const name of Object.keys(odd)) {
      for (const text of [`${name} == 1`, `${name} != null`, `${name} > 0`, `${name}.x == null`]) {
        expect(() => evaluateCondition(parseCondition(text), odd)).not.toThrow();
      }
    }
    expect(evaluateCondition(parseCondition('b > 0'), odd)).toBe(false);
  });
});
