/**
 * FEEL, the expression language of Camunda 8 models (`=amount > 100`,
 * `=order.id`, `=duration("P" + string(days) + "D")`), by feelin, bpmn.io's
 * interpreter. Pure: an expression is checked when the model loads and
 * evaluated over process variables; it never runs code of the model.
 *
 * A model writes FEEL as text starting with `=`; the engine keeps the
 * expression without it. Evaluation is strict where FEEL is lenient: a
 * warning (a variable or a context entry not found, values that do not
 * compare or add up) is a failure naming the expression, never a silent
 * null, so the engine stops the token with an incident instead of taking a
 * wrong turn.
 */
import { evaluate, isFunction, isRange, parseExpression } from 'feelin';
import { createContext, Script } from 'node:vm';

/** An expression this long belongs in a task's handler, not in a diagram. */
const MAX_LENGTH = 4096;

/**
 * How long one evaluation of an expression that loops may run (`for`,
 * `some`, `every`, or a function it defines): its work can grow with a
 * variable (`count(for i in 1..n return i)` with `n` from a message), so it
 * runs under V8's own watchdog and fails past this. Any other expression
 * (paths, comparisons, arithmetic, filters, built-in functions) does work
 * bounded by its text and the variables it reads, and runs directly. About a thousand times what an expression of a model
 * takes (0.15 ms), so only a runaway one meets it.
 */
export const FEEL_TIME_LIMIT_MS = 100;

/** Most values (list items and context entries, at any depth) a FEEL result may hold: more could not be stored as a variable anyway. */
export const FEEL_MAX_VALUES = 100_000;

/** Most characters of text a FEEL result may hold in all (Firestore stores 1 MiB in a document). */
export const FEEL_MAX_TEXT = 1_048_576;
/** Messages quote an expression up to this many characters. */
const QUOTED = 200;

/** What an evaluation gave: a plain value (JSON's kinds; dates and durations as ISO text), or why it failed. */
export type FeelResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** `=order.id` → `order.id`; null for text that is not FEEL. */
export function feelBody(text: string): string | null {
  return text.startsWith('=') ? text.slice(1).trim() : null;
}

/** A condition or an expression as a message quotes it: at most {@link QUOTED} characters, so a pasted script never floods a line. */
export function quoteText(text: string): string {
  return JSON.stringify(text.length > QUOTED ? `${text.slice(0, QUOTED - 1)}…` : text);
}

/** The expression as a message quotes it: `=…`, bounded by {@link quoteText}. */
export const quoteFeel = (expression: string): string => quoteText(`=${expression}`);

/** The name an expression reads when it is a plain variable (`orderId`), else null. */
export function feelVariable(expression: string): string | null {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(expression) ? expression : null;
}

/**
 * Why `expression` is no FEEL expression, or null. Checked when the model
 * loads: a syntax error refuses the model, naming the element and the
 * expression, rather than failing the first token that reaches it.
 */
export function feelSyntaxError(expression: string): string | null {
  if (expression === '') return 'an empty FEEL expression';
  if (expression.length > MAX_LENGTH) return `a FEEL expression over ${MAX_LENGTH} characters`;
  const found: { at: number | null } = { at: null };
  try {
    parseExpression(expression, {}, undefined).iterate({
      enter(node) {
        if (found.at !== null) return false;
        if (node.type.isError) found.at = node.from;
        return found.at === null;
      },
    });
  } catch (err) {
    return `FEEL syntax error: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (found.at === null) return null;
  const near = expression.slice(found.at, found.at + 20);
  const where = near === '' ? ' (the expression ends too early)' : ` near ${JSON.stringify(near)}`;
  return `FEEL syntax error at position ${found.at + 1}${where} in ${quoteFeel(expression)}`;
}

/** What converting a result has taken so far: values and characters, bounded by FEEL_MAX_VALUES and FEEL_MAX_TEXT. */
interface Size {
  values: number;
  text: number;
}

/** A FEEL value as process variables store it, or why it cannot be stored. */
function plain(value: unknown, size: Size, depth = 0): FeelResult {
  if (depth > 32) return { ok: false, error: 'the value is nested deeper than 32 levels' };
  size.values += 1;
  if (size.values > FEEL_MAX_VALUES)
    return { ok: false, error: `the value holds more than ${FEEL_MAX_VALUES} items and entries` };
  if (typeof value === 'string') {
    size.text += value.length;
    if (size.text > FEEL_MAX_TEXT) return { ok: false, error: `the value holds more than ${FEEL_MAX_TEXT} characters` };
    return { ok: true, value };
  }
  if (value === null || typeof value === 'boolean') return { ok: true, value };
  if (typeof value === 'number')
    return Number.isFinite(value) ? { ok: true, value } : { ok: false, error: `the number ${value} cannot be stored` };
  if (isFunction(value) || isRange(value)) return { ok: false, error: 'a function or a range cannot be stored' };
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      const converted = plain(item, size, depth + 1);
      if (!converted.ok) return converted;
      items.push(converted.value);
    }
    return { ok: true, value: items };
  }
  if (typeof value === 'object') {
    // Dates, times and durations are objects with an ISO text.
    if (Object.getPrototypeOf(value) !== Object.prototype) {
      const json: unknown = JSON.parse(JSON.stringify(value));
      return typeof json === 'string'
        ? { ok: true, value: json }
        : { ok: false, error: 'an object of FEEL cannot be stored' };
    }
    const entries: [string, unknown][] = [];
    for (const [key, item] of Object.entries(value)) {
      size.text += key.length;
      const converted = plain(item, size, depth + 1);
      if (!converted.ok) return converted;
      entries.push([key, converted.value]);
    }
    return { ok: true, value: Object.fromEntries(entries) };
  }
  return { ok: false, error: `a ${typeof value} cannot be stored` };
}

/**
 * The syntax nodes whose work a variable can make grow beyond the values it
 * holds: a loop over a range (`for i in 1..n`, `some`, `every`), and a
 * function the expression defines (it may call itself). Everything else,
 * built-in functions and filters included, does work bounded by the
 * expression's text and the size of the variables it reads.
 */
const UNBOUNDED = new Set(['ForExpression', 'QuantifiedExpression', 'FunctionDefinition']);

/** Whether an expression loops (so runs under the time limit), by its text; remembered per text. */
const guarded = new Map<string, boolean>();

function needsGuard(expression: string): boolean {
  const known = guarded.get(expression);
  if (known !== undefined) return known;
  let found = false;
  try {
    parseExpression(expression, {}, undefined).iterate({
      enter(node) {
        if (UNBOUNDED.has(node.type.name)) found = true;
        return !found;
      },
    });
  } catch {
    found = true;
  }
  // The models' expressions are a bounded set; should anything else come through, the memory stays bounded too.
  if (guarded.size >= 10_000) guarded.clear();
  guarded.set(expression, found);
  return found;
}

/** A realm of its own whose script calls feelin's `evaluate`: run with a timeout, V8 stops it wherever it is. */
const sandbox = ((): { run: (expression: string, context: Record<string, unknown>) => ReturnType<typeof evaluate> } => {
  let realm: { context: ReturnType<typeof createContext>; script: Script } | null = null;
  return {
    run(expression, context) {
      realm ??= {
        context: createContext({ evaluate, expression: '', variables: {}, result: null }),
        script: new Script('result = evaluate(expression, variables)'),
      };
      const inside = realm.context as { expression: string; variables: unknown; result: unknown };
      inside.expression = expression;
      inside.variables = context;
      try {
        realm.script.runInContext(realm.context, { timeout: FEEL_TIME_LIMIT_MS });
        return inside.result as ReturnType<typeof evaluate>;
      } finally {
        inside.variables = {};
        inside.result = null;
      }
    },
  };
})();

/**
 * Evaluates `expression` over `variables`. Never throws: a warning of the
 * interpreter (a missing variable, a key not found, a type mismatch) or an
 * error is a failure whose text names the expression and what went wrong.
 * So is an expression that runs past {@link FEEL_TIME_LIMIT_MS} or builds
 * more than {@link FEEL_MAX_VALUES} values or {@link FEEL_MAX_TEXT}
 * characters: the engine stops the token with EXPRESSION_FAILED, whatever a
 * message made of its variables.
 */
export function evaluateFeel(expression: string, variables: Readonly<Record<string, unknown>>): FeelResult {
  const fail = (why: string): FeelResult => ({ ok: false, error: `FEEL ${quoteFeel(expression)}: ${why}` });
  let result: ReturnType<typeof evaluate>;
  try {
    result = needsGuard(expression)
      ? sandbox.run(expression, { ...variables })
      : evaluate(expression, { ...variables });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT')
      return fail(`the evaluation ran longer than ${FEEL_TIME_LIMIT_MS} ms (a loop over a large range or list?)`);
    return fail(err instanceof Error ? err.message : String(err));
  }
  const [warning] = result.warnings;
  if (warning !== undefined) return fail(warning.message);
  const converted = plain(result.value, { values: 0, text: 0 });
  return converted.ok ? converted : fail(converted.error);
}

/** A FEEL condition: true or false; null, a number or a text is a failure, as in Camunda 8. */
export function evaluateFeelCondition(
  expression: string,
  variables: Readonly<Record<string, unknown>>,
): { readonly ok: true; readonly value: boolean } | { readonly ok: false; readonly error: string } {
  const result = evaluateFeel(expression, variables);
  if (!result.ok) return result;
  if (typeof result.value === 'boolean') return { ok: true, value: result.value };
  return {
    ok: false,
    error: `FEEL ${quoteFeel(expression)}: a condition must be true or false, not ${JSON.stringify(result.value)}`,
  };
}
