/**
 * The door checks of startProcess: what Firestore cannot store, and what the
 * model can never correlate, is refused before anything is written, with
 * the path of the offending value. Measured against Firestore's documented
 * limits (https://firebase.google.com/docs/firestore/quotas#limits) and its
 * storage-size rules (https://firebase.google.com/docs/firestore/storage-size),
 * each checked against the emulator in test/process/start-process-door.test.ts.
 */
import { correlationValue } from '../engine/expressions';
import type { MessageWaitNode, ProcessModel } from '../bpmn/model';
import { resolveTimer } from '../bpmn/timer';
import { hasLoneSurrogate } from '../receiver/envelope';
import { MAX_KEY_CHARS } from '../receiver/registry';

/**
 * Largest storage size of `variables` (Firestore's count: UTF-8 bytes + 1 per
 * string and key, 8 per number, 1 per boolean or null). Process variables are
 * routing data and references, not documents. 64 KiB is a sixteenth of
 * Firestore's 1 MiB document limit: the instance document also takes
 * everything merged into the variables later (each correlated message's
 * payload, each job's result), the audit trail of the last 100 correlated
 * message ids and every incident, and an app's step may publish the
 * variables in a Pub/Sub message; none of that may ever push a running
 * instance over the limit, where every further step of it would fail.
 */
export const MAX_VARIABLES_BYTES = 64 * 1024;

/**
 * Most values (fields and array elements, at any depth). Firestore indexes
 * every field of an instance (asc and desc, array elements for
 * array-contains), at most 40,000 index entries per document; 5,000 values
 * stay far below it, which the byte bound alone does not guarantee for
 * tiny values.
 */
export const MAX_VARIABLE_VALUES = 5_000;

/** Nesting bound; Firestore allows 20 levels and the variables are one level down in the instance. */
export const MAX_VARIABLES_DEPTH = 10;

/** Firestore's limit on a field path (names joined by dots, in UTF-8 bytes); the emulator refuses one byte more. */
const MAX_FIELD_PATH_BYTES = 1_500;
/** The instance field the variables are stored under: part of every field path. */
const STORED_UNDER = 'variables';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

interface Walk {
  values: number;
  /** Storage size so far, Firestore's count. */
  size: number;
}

/** Path for messages: `variables.a.b[0]`, keys that are not identifiers quoted. */
function child(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function visit(
  value: unknown,
  walk: Walk,
  at: { path: string; fieldPathBytes: number; depth: number; inArray: boolean },
): string | null {
  walk.values += 1;
  if (at.depth > MAX_VARIABLES_DEPTH) return `${at.path} is nested deeper than ${MAX_VARIABLES_DEPTH} levels`;
  if (typeof value === 'string') {
    if (hasLoneSurrogate(value)) return `${at.path} is not valid Unicode (lone surrogate): Firestore cannot store it`;
    walk.size += bytes(value) + 1;
    return null;
  }
  if (typeof value === 'number') {
    walk.size += 8;
    return null;
  }
  if (typeof value !== 'object' || value === null) {
    // JSON leaves only booleans and null here.
    walk.size += 1;
    return null;
  }
  if (Array.isArray(value)) {
    if (at.inArray) return `${at.path} is an array inside an array, which Firestore cannot store`;
    for (const [i, item] of value.entries()) {
      const problem = visit(item, walk, { ...at, path: `${at.path}[${i}]`, depth: at.depth + 1, inArray: true });
      if (problem !== null) return problem;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const path = child(at.path, key);
    if (key === '' || /^__.*__$/.test(key))
      return `${at.path} has the key ${JSON.stringify(key)}, which Firestore does not allow`;
    if (hasLoneSurrogate(key)) return `${path} is not valid Unicode (lone surrogate): Firestore cannot store the key`;
    const fieldPathBytes = at.fieldPathBytes + 1 + bytes(key);
    if (fieldPathBytes > MAX_FIELD_PATH_BYTES) {
      return `${path.slice(0, 120)}… has a field path of ${fieldPathBytes} bytes as stored (${STORED_UNDER}.…); Firestore allows ${MAX_FIELD_PATH_BYTES}`;
    }
    walk.size += bytes(key) + 1;
    const problem = visit((value as Record<string, unknown>)[key], walk, {
      path,
      fieldPathBytes,
      depth: at.depth + 1,
      inArray: false,
    });
    if (problem !== null) return problem;
  }
  return null;
}

/** Walks `variables` as they are stored: what Firestore could not store (null: nothing), and the counts. */
function measure(variables: unknown): { readonly problem: string | null; readonly walk: Walk } {
  const walk: Walk = { values: 0, size: 0 };
  const problem = visit(variables, walk, {
    path: STORED_UNDER,
    fieldPathBytes: bytes(STORED_UNDER),
    depth: 0,
    inArray: false,
  });
  // The map itself is not a value the caller chose.
  return { problem, walk: { values: walk.values - 1, size: walk.size } };
}

/** The top-level variable that takes the most bytes (its key with it), as a message names it: ` (the largest: variables.x, N bytes)`. */
function largestOf(variables: unknown): string {
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) return '';
  let largest: { readonly path: string; readonly size: number } | null = null;
  for (const [key, value] of Object.entries(variables as Record<string, unknown>)) {
    const size = bytes(key) + 1 + measure(value).walk.size;
    if (largest === null || size > largest.size) largest = { path: child(STORED_UNDER, key), size };
  }
  return largest === null ? '' : ` (the largest: ${largest.path}, ${largest.size} bytes)`;
}

/** Why variables of these counts exceed our bounds (naming the largest variable of `variables` for the size), or null. */
function boundsProblem(variables: unknown, walk: Walk): string | null {
  if (walk.values > MAX_VARIABLE_VALUES)
    return `variables hold ${walk.values} values; at most ${MAX_VARIABLE_VALUES} values are allowed`;
  if (walk.size > MAX_VARIABLES_BYTES)
    return `variables take ${walk.size} bytes as Firestore counts them${largestOf(variables)}; at most ${MAX_VARIABLES_BYTES} bytes are allowed`;
  return null;
}

/**
 * Why Firestore could not store these variables as an instance's
 * `variables`, or why they exceed our bounds; null if they are fine. Works
 * on the raw request body, so a `__proto__` key (which zod's record parser
 * drops) is seen too.
 */
export function variablesProblem(variables: unknown): string | null {
  const { problem, walk } = measure(variables);
  return problem ?? boundsProblem(variables, walk);
}

/**
 * Why an instance's variables after a merge (`merged`: `before`, its
 * variables now, with what a user task's completion brings) would exceed
 * the bounds, or null. Each part within the bounds does not make the merge
 * so: 40 KiB of variables and a completion of 30 KiB are 70 KiB together,
 * and every step after it merges more. Checked on the merge, not only on
 * the completion, since the merge is what the instance stores. A merge no
 * bigger than `before` is never refused, even when `before` is over a bound
 * already (variables a job or a message merged in): a completion that adds
 * nothing must not leave its task uncompletable.
 */
export function mergedVariablesProblem(
  before: Readonly<Record<string, unknown>>,
  merged: Readonly<Record<string, unknown>>,
): string | null {
  const after = measure(merged);
  const problem = after.problem ?? boundsProblem(merged, after.walk);
  if (problem === null) return null;
  const was = measure(before);
  if (after.walk.size <= was.walk.size && after.walk.values <= was.walk.values) return null;
  return `merged with the instance's variables, ${problem}`;
}

/** A variable the model correlates on, and where it waits on it. */
export interface CorrelationRequirement {
  readonly variable: string;
  readonly waits: readonly MessageWaitNode[];
}

/**
 * The variables a model correlates on: the `inbox:correlationKey` of every
 * message wait (catch event or receive task), in document order. All of
 * them, not only the first wait's: a token reaching a later wait without its
 * key stops there just the same (INCIDENT / MISSING_CORRELATION_KEY), and no
 * command can give an instance a variable afterwards.
 */
export function correlationRequirements(model: ProcessModel): CorrelationRequirement[] {
  const byVariable = new Map<string, MessageWaitNode[]>();
  for (const node of Object.values(model.nodes)) {
    // A FEEL key is computed when the token arrives: nothing to check at the door.
    if ((node.kind !== 'messageCatchEvent' && node.kind !== 'receiveTask') || node.correlationVariable === null)
      continue;
    byVariable.set(node.correlationVariable, [...(byVariable.get(node.correlationVariable) ?? []), node]);
  }
  return [...byVariable].map(([variable, waits]) => ({ variable, waits }));
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return 'an empty string';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Why these variables can never be correlated by the model, or null: each
 * correlation variable must be present as a non-empty string or a number,
 * the values the engine waits under (engine/waits.ts, correlationValue).
 */
export function correlationProblem(model: ProcessModel, variables: Readonly<Record<string, unknown>>): string | null {
  for (const { variable, waits } of correlationRequirements(model)) {
    const value = Object.prototype.hasOwnProperty.call(variables, variable) ? variables[variable] : undefined;
    const key = correlationValue(value);
    // The receiver trims a message's key and bounds it: a value it could never carry would wait forever.
    if (key !== null && key.length <= MAX_KEY_CHARS && key === key.trim()) continue;
    if (key !== null) {
      const why =
        key.length > MAX_KEY_CHARS
          ? `is ${key.length} characters long, over the ${MAX_KEY_CHARS} a message key may have`
          : 'has whitespace around it, which a message key never has (messages are trimmed)';
      return `variables.${variable} ${why}: process ${model.key} correlates on it, so no message could ever reach this instance`;
    }
    const where = waits.map((w) => `${w.id} waits for ${w.messageName}`).join(', ');
    const got = value === undefined ? 'is required' : `is ${kindOf(value)}`;
    return `variables.${variable} ${got}: process ${model.key} correlates on it (${where}); give a non-empty string or a number`;
  }
  return null;
}

/** Any instant: whether a timer's text is valid does not depend on when it is set. */
const SOME_TIME = new Date(0);

/**
 * Why a timer of the model could never be set from these variables, or
 * null: a `${variable}` timer whose variable is given but is no valid text
 * of its form (a duration, a date-time, a cycle), or is absent while the
 * timer has no `inbox:default`. Checked at the door because the token would
 * otherwise stop later with INVALID_TIMER, days after the start that caused it.
 */
export function timerProblem(model: ProcessModel, variables: Readonly<Record<string, unknown>>): string | null {
  for (const node of Object.values(model.nodes)) {
    if (node.kind !== 'timerCatchEvent' && node.kind !== 'boundaryTimer') continue;
    if (node.timer.variable === null) continue;
    const resolved = resolveTimer(node.timer, variables, SOME_TIME);
    if (typeof resolved === 'string')
      return `variables.${node.timer.variable}: ${resolved} (timer ${node.id} of process ${model.key} is set from it)`;
  }
  return null;
}

/**
 * The door checks of startProcess, for the variables a message start
 * supplies (its payload and the correlation variable): why the process
 * could not start with them, or null. The relay parks such a message
 * START_REFUSED instead of starting an instance that Firestore cannot store
 * or that would stop at a wait it can never be correlated to.
 */
export function messageStartProblem(model: ProcessModel, variables: Readonly<Record<string, unknown>>): string | null {
  return variablesProblem(variables) ?? correlationProblem(model, variables) ?? timerProblem(model, variables);
}
