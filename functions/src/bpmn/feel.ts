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

/** An expression this long belongs in a task's handler, not in a diagram. */
const MAX_LENGTH = 4096;
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

/** A FEEL value as process variables store it, or why it cannot be stored. */
function plain(value: unknown, depth = 0): FeelResult {
  if (depth > 32) return { ok: false, error: 'the value is nested deeper than 32 levels' };
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return { ok: true, value };
  if (typeof value === 'number')
    return Number.isFinite(value) ? { ok: true, value } : { ok: false, error: `the number ${value} cannot be stored` };
  if (isFunction(value) || isRange(value)) return { ok: false, error: 'a function or a range cannot be stored' };
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      const converted = plain(item, depth + 1);
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
      const converted = plain(item, depth + 1);
      if (!converted.ok) return converted;
      entries.push([key, converted.value]);
    }
    return { ok: true, value: Object.fromEntries(entries) };
  }
  return { ok: false, error: `a ${typeof value} cannot be stored` };
}

/**
 * Evaluates `expression` over `variables`. Never throws: a warning of the
 * interpreter (a missing variable, a key not found, a type mismatch) or an
 * error is a failure whose text names the expression and what went wrong.
 */
export function evaluateFeel(expression: string, variables: Readonly<Record<string, unknown>>): FeelResult {
  const fail = (why: string): FeelResult => ({ ok: false, error: `FEEL ${quoteFeel(expression)}: ${why}` });
  let result: ReturnType<typeof evaluate>;
  try {
    result = evaluate(expression, { ...variables });
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  const [warning] = result.warnings;
  if (warning !== undefined) return fail(warning.message);
  const converted = plain(result.value);
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
