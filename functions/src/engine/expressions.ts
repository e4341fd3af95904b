/**
 * The places a model's expressions meet the variables at run time: a
 * message wait's key (a variable or FEEL), `zeebe:ioMapping` inputs and
 * outputs, a gateway's conditions. Pure; each answers a value or the text
 * of the incident the token stops with, naming the element and the
 * expression, never a silent null.
 */
import { conditionResult } from '../bpmn/condition';
import { evaluateFeel } from '../bpmn/feel';
import type { Condition, IoMapping, Mapping } from '../bpmn/model';
import type { IncidentReason } from './state';

/** A non-empty string, or a finite number as text: what a message key can be; null for anything else. */
export function correlationValue(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** Why a token cannot stop somewhere: the incident's reason and text. */
export interface Stop {
  readonly reason: IncidentReason;
  readonly message: string;
}

/** Where a wait's key comes from (a message wait, a boundary message, an event subprocess's message start). */
export interface KeySource {
  readonly messageName: string;
  readonly correlationVariable: string | null;
  readonly correlationExpression?: string;
}

/** The key a wait waits under over these variables, or why there is none; `where` ends the text (` (branch x)`). */
export function waitKey(
  source: KeySource,
  variables: Readonly<Record<string, unknown>>,
  where = '',
): { readonly key: string } | Stop {
  const wanted = `to wait for ${source.messageName}${where}`;
  if (source.correlationExpression !== undefined) {
    const result = evaluateFeel(source.correlationExpression, variables);
    if (!result.ok) return { reason: 'EXPRESSION_FAILED', message: `${result.error}: no key ${wanted}` };
    const key = correlationValue(result.value);
    if (key !== null) return { key };
    return {
      reason: 'MISSING_CORRELATION_KEY',
      message: `=${source.correlationExpression} gave ${JSON.stringify(result.value)}: a key must be a non-empty string or a number ${wanted}`,
    };
  }
  const variable = source.correlationVariable ?? '';
  const key = correlationValue(Object.hasOwn(variables, variable) ? variables[variable] : undefined);
  if (key !== null) return { key };
  return {
    reason: 'MISSING_CORRELATION_KEY',
    message: `variable ${variable} must be a non-empty string or a number ${wanted}`,
  };
}

/** Each mapping's value over `scope`, or the failure naming the element and the mapping. */
function mapped(
  mappings: readonly Mapping[],
  scope: Readonly<Record<string, unknown>>,
  elementId: string,
  direction: 'input' | 'output',
): { readonly values: Record<string, unknown> } | Stop {
  const values: Record<string, unknown> = {};
  for (const mapping of mappings) {
    if (mapping.expression === undefined) {
      values[mapping.target] = mapping.value ?? '';
      continue;
    }
    // Camunda 8 lets a later mapping read an earlier one's target.
    const result = evaluateFeel(mapping.expression, { ...scope, ...values });
    if (!result.ok)
      return {
        reason: 'EXPRESSION_FAILED',
        message: `${elementId}: zeebe:${direction} ${mapping.target}: ${result.error}`,
      };
    values[mapping.target] = result.value;
  }
  return { values };
}

/** What a handler sees: the variables with the inputs laid over them (never stored). */
export function inputsOver(
  io: IoMapping | undefined,
  variables: Readonly<Record<string, unknown>>,
  elementId: string,
): { readonly values: Readonly<Record<string, unknown>> } | Stop {
  if (io === undefined || io.inputs.length === 0) return { values: variables };
  const inputs = mapped(io.inputs, variables, elementId, 'input');
  return 'values' in inputs ? { values: { ...variables, ...inputs.values } } : inputs;
}

/**
 * The variables after `result` (a handler's, a completion's, a message's)
 * comes back: with outputs, only the outputs, evaluated over the variables,
 * the inputs and the result; without, the whole result merged.
 */
export function resultInto(
  io: IoMapping | undefined,
  variables: Readonly<Record<string, unknown>>,
  result: Readonly<Record<string, unknown>>,
  elementId: string,
): { readonly values: Readonly<Record<string, unknown>> } | Stop {
  if (io === undefined || io.outputs.length === 0) return { values: { ...variables, ...result } };
  const seen = inputsOver(io, variables, elementId);
  if (!('values' in seen)) return seen;
  const outputs = mapped(io.outputs, { ...seen.values, ...result }, elementId, 'output');
  return 'values' in outputs ? { values: { ...variables, ...outputs.values } } : outputs;
}

/** A flow's condition over the variables: taken or not, or the failure naming the flow. */
export function flowTaken(
  flow: { readonly id: string; readonly condition: Condition | null },
  variables: Readonly<Record<string, unknown>>,
): boolean | Stop {
  if (flow.condition === null) return true;
  const result = conditionResult(flow.condition, variables);
  if (result.ok) return result.value;
  return { reason: 'EXPRESSION_FAILED', message: `condition of flow ${flow.id}: ${result.error}` };
}
