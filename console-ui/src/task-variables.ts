/**
 * The completion form's variables, checked in the page before anything is
 * sent: empty is no variables, else a JSON object (what `inbox tasks
 * complete --vars` takes). Pure, so the unit tests hold it to its words.
 */

export type VariablesInput =
  | { readonly ok: true; readonly variables: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly reason: string };

const EXAMPLE = 'write an object such as {"approved": true}, or leave the field empty';

export function parseVariables(text: string): VariablesInput {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, variables: {} };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (err) {
    return {
      ok: false,
      reason: `Variables: not JSON (${err instanceof Error ? err.message : String(err)}); ${EXAMPLE}.`,
    };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const what = Array.isArray(value) ? 'an array' : JSON.stringify(value).slice(0, 80);
    return { ok: false, reason: `Variables: a JSON object of variables, not ${what}; ${EXAMPLE}.` };
  }
  return { ok: true, variables: value as Record<string, unknown> };
}
