/**
 * The condition language of sequence flows leaving an exclusive gateway.
 * Pure: a tokenizer and a recursive-descent parser producing the plain
 * {@link Condition} data of the engine model, and an evaluator over process
 * variables. Conditions are never executed as code (no eval, no Function),
 * so a model file cannot run anything.
 *
 * Grammar (precedence ! > && > ||), optionally wrapped in `${ ... }`:
 *   or      := and ( '||' and )*
 *   and     := unary ( '&&' unary )*
 *   unary   := '!' unary | '(' or ')' | compare
 *   compare := path ( '==' | '!=' | '<' | '<=' | '>' | '>=' ) literal
 *   path    := ident ( '.' ident )*          ident := [A-Za-z_][A-Za-z0-9_]*
 *   literal := number | string | true | false | null
 */
import type { ComparisonOperator, Condition, Literal } from './model';
import { evaluateFeelCondition, feelBody, feelSyntaxError, quoteText } from './feel';

/** Longer conditions belong in a task, not in a diagram. */
const MAX_LENGTH = 4096;
/** Bounds recursion (parentheses and `!`), so hostile input cannot blow the stack. */
const MAX_DEPTH = 32;
const KEYWORDS: ReadonlyMap<string, Literal> = new Map<string, Literal>([
  ['true', true],
  ['false', false],
  ['null', null],
]);

type Token =
  | { readonly kind: 'path'; readonly text: string; readonly pos: number }
  | { readonly kind: 'literal'; readonly value: Literal; readonly text: string; readonly pos: number }
  | { readonly kind: 'op'; readonly text: string; readonly pos: number }
  | { readonly kind: 'end'; readonly text: string; readonly pos: number };

// Longest first, so `<=` is not read as `<` followed by `=`.
const OPERATORS = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '(', ')'] as const;
const COMPARISONS: ReadonlySet<string> = new Set<ComparisonOperator>(['==', '!=', '<', '<=', '>', '>=']);
const PATH = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const NUMBER = /-?[0-9]+(?:\.[0-9]+)?(?![A-Za-z0-9_.])/y;

/** A syntax error; positions are 1-based columns in the text as written. */
function fail(text: string, pos: number, problem: string): never {
  throw new Error(`invalid condition ${quoteText(text)}: ${problem} at position ${pos + 1}`);
}

/** Reads a quoted string starting at `start` (the quote). Returns the value and the index after it. */
function readString(text: string, start: number, end: number): [string, number] {
  const quote = text[start];
  let value = '';
  for (let i = start + 1; i < end; i++) {
    const c = text[i];
    if (c === quote) return [value, i + 1];
    if (c === '\\') {
      const next = text[i + 1];
      if (next !== "'" && next !== '"' && next !== '\\')
        fail(text, i, `unsupported escape \\${next ?? ''} (only \\' \\" \\\\)`);
      value += next;
      i++;
    } else {
      value += c;
    }
  }
  return fail(text, start, 'unterminated string');
}

function tokenize(text: string, start: number, end: number): Token[] {
  const tokens: Token[] = [];
  let i = start;
  while (i < end) {
    const c = text[i] ?? '';
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      const [value, after] = readString(text, i, end);
      tokens.push({ kind: 'literal', value, text: text.slice(i, after), pos: i });
      i = after;
      continue;
    }
    NUMBER.lastIndex = i;
    PATH.lastIndex = i;
    const number = NUMBER.exec(text)?.[0];
    const path = number === undefined ? PATH.exec(text)?.[0] : undefined;
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (number !== undefined) {
      const value = Number(number);
      if (!Number.isFinite(value)) fail(text, i, `number ${number} is out of range`);
      tokens.push({ kind: 'literal', value, text: number, pos: i });
      i += number.length;
    } else if (path !== undefined) {
      const keyword = KEYWORDS.get(path);
      tokens.push(
        keyword !== undefined
          ? { kind: 'literal', value: keyword, text: path, pos: i }
          : { kind: 'path', text: path, pos: i },
      );
      i += path.length;
    } else if (/[-0-9]/.test(c)) {
      fail(text, i, 'malformed number (write digits, optionally with a leading - and a decimal part)');
    } else if (op !== undefined) {
      tokens.push({ kind: 'op', text: op, pos: i });
      i += op.length;
    } else {
      fail(text, i, `unexpected character ${JSON.stringify(c)}`);
    }
  }
  tokens.push({ kind: 'end', text: 'end of condition', pos: end });
  return tokens;
}

/**
 * Parses a sequence flow condition such as `${completedItems > 0 && status == 'DONE'}`.
 * Ordering operators (< <= > >=) need a number literal, since they can never
 * hold for anything else (see {@link evaluateCondition}); writing one with a
 * string, boolean or null literal is a modelling mistake, reported here.
 *
 * @throws Error with a message naming the problem and its 1-based position.
 */
export function parseCondition(text: string): Condition {
  if (text.length > MAX_LENGTH) throw new Error(`invalid condition: longer than ${MAX_LENGTH} characters`);
  const { start, end } = bodyOf(text);
  return new Parser(text, tokenize(text, start, end), end).parse();
}

/**
 * A condition as a model writes it: FEEL when it starts with `=` (Camunda
 * 8; checked now, evaluated by bpmn/feel.ts), else the engine's own
 * language ({@link parseCondition}).
 *
 * @throws Error naming the problem.
 */
export function parseAnyCondition(text: string): Condition {
  const feel = feelBody(text.trim());
  if (feel === null) return parseCondition(text);
  const error = feelSyntaxError(feel);
  if (error !== null) throw new Error(`invalid condition: ${error}`);
  return { kind: 'feel', expression: feel };
}

/**
 * A condition's value over the variables. The engine's own language never
 * fails ({@link evaluateCondition}); FEEL fails on a missing variable, a
 * failed evaluation or a value that is not true or false, and the engine
 * turns that into an incident naming the element and the expression.
 */
export function conditionResult(
  condition: Condition,
  variables: Readonly<Record<string, unknown>>,
): { readonly ok: true; readonly value: boolean } | { readonly ok: false; readonly error: string } {
  if (condition.kind === 'feel') return evaluateFeelCondition(condition.expression, variables);
  return { ok: true, value: evaluateCondition(condition, variables) };
}

/** Where the condition itself lies in `text`: inside `${ ... }` when it is so wrapped, else all of it. */
function bodyOf(text: string): { start: number; end: number } {
  const trimmed = text.trim();
  if (!trimmed.startsWith('${')) return { start: 0, end: text.length };
  if (!trimmed.endsWith('}')) fail(text, text.length, "missing closing '}' of '${'");
  return { start: text.indexOf('${') + 2, end: text.lastIndexOf('}') };
}

const isOp = (t: Token, op: string): boolean => t.kind === 'op' && t.text === op;

/** Recursive descent over the tokens of one condition, one method per rule of the grammar above. */
class Parser {
  private index = 0;
  /** Open parentheses and `!` around the current token, bounded by {@link MAX_DEPTH}. */
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: readonly Token[],
    /** Where the condition ends in `text`, for errors at its end. */
    private readonly end: number,
  ) {}

  /** The whole condition: one `or`, and nothing after it. */
  parse(): Condition {
    if (this.peek().kind === 'end') fail(this.text, this.end, 'empty condition');
    const condition = this.or();
    const rest = this.peek();
    if (rest.kind !== 'end') fail(this.text, rest.pos, `unexpected ${rest.text}`);
    return condition;
  }

  private peek(): Token {
    return this.tokens[this.index] ?? fail(this.text, this.end, 'unexpected end');
  }

  private next(): Token {
    const t = this.peek();
    this.index++;
    return t;
  }

  private or(): Condition {
    let left = this.and();
    while (isOp(this.peek(), '||')) {
      this.next();
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Condition {
    let left = this.unary();
    while (isOp(this.peek(), '&&')) {
      this.next();
      left = { kind: 'and', left, right: this.unary() };
    }
    return left;
  }

  private unary(): Condition {
    const t = this.peek();
    if (!isOp(t, '!') && !isOp(t, '(')) return this.compare();
    if (++this.depth > MAX_DEPTH) fail(this.text, t.pos, `nested deeper than ${MAX_DEPTH} levels`);
    this.next();
    let result: Condition;
    if (t.text === '!') {
      result = { kind: 'not', operand: this.unary() };
    } else {
      result = this.or();
      const close = this.next();
      if (!isOp(close, ')'))
        fail(this.text, close.pos, `expected ')' to close the '(' at position ${t.pos + 1} but found ${close.text}`);
    }
    this.depth--;
    return result;
  }

  private compare(): Condition {
    const variable = this.next();
    if (variable.kind !== 'path') fail(this.text, variable.pos, `expected a variable name but found ${variable.text}`);
    const op = this.next();
    if (op.kind !== 'op' || !COMPARISONS.has(op.text)) {
      fail(this.text, op.pos, `expected a comparison (== != < <= > >=) after ${variable.text} but found ${op.text}`);
    }
    const literal = this.next();
    if (literal.kind !== 'literal')
      fail(
        this.text,
        literal.pos,
        `expected a literal (number, string, true, false, null) after ${op.text} but found ${literal.text}`,
      );
    if (op.text !== '==' && op.text !== '!=' && typeof literal.value !== 'number') {
      fail(this.text, literal.pos, `${op.text} compares numbers only, not ${literal.text}`);
    }
    return { kind: 'compare', variable: variable.text, op: op.text as ComparisonOperator, value: literal.value };
  }
}

/**
 * Looks up a dotted path through own properties only: `__proto__`,
 * `constructor` and the like are never inherited, so they resolve to
 * undefined and a condition cannot reach into prototypes.
 */
function resolve(variables: Readonly<Record<string, unknown>>, path: string): unknown {
  let current: unknown = variables;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.prototype.hasOwnProperty.call(current, segment))
      return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function compare(actual: unknown, op: ComparisonOperator, expected: Literal): boolean {
  if (op === '==') return expected === null ? actual === null || actual === undefined : actual === expected;
  if (op === '!=') return !compare(actual, '==', expected);
  // Ordering only between numbers: no coercion, so '10' < 9 and undefined > 0 are false, not surprises.
  if (typeof actual !== 'number' || typeof expected !== 'number') return false;
  switch (op) {
    case '<':
      return actual < expected;
    case '<=':
      return actual <= expected;
    case '>':
      return actual > expected;
    case '>=':
      return actual >= expected;
  }
}

/**
 * Evaluates a parsed condition against process variables. Never throws and
 * never coerces:
 * - `==` is strict equality with the literal; `x == null` also holds when
 *   `x` is missing (undefined). `!=` is exactly the negation of `==`, so a
 *   missing variable `!= 'A'` holds.
 * - `<`, `<=`, `>`, `>=` hold only if the variable is a number (NaN never
 *   compares); a missing, string, boolean or object value makes them false.
 * - `!` is plain negation: `!(x > 0)` holds when `x` is missing.
 */
export function evaluateCondition(condition: Condition, variables: Readonly<Record<string, unknown>>): boolean {
  switch (condition.kind) {
    case 'compare':
      return compare(resolve(variables, condition.variable), condition.op, condition.value);
    case 'and':
      return evaluateCondition(condition.left, variables) && evaluateCondition(condition.right, variables);
    case 'or':
      return evaluateCondition(condition.left, variables) || evaluateCondition(condition.right, variables);
    case 'not':
      return !evaluateCondition(condition.operand, variables);
    case 'feel': {
      // Only conditionResult meets FEEL (it is never inside && or ||); a failure is false here.
      const result = evaluateFeelCondition(condition.expression, variables);
      return result.ok && result.value;
    }
  }
}
