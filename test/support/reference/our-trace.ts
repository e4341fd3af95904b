/**
 * What our engine passes inside one transition, observed. A Transition
 * carries each token's end state only, not the nodes it went through on the
 * way; the differential test compares exactly those. The engine modules
 * move tokens with three functions of engine/run.ts, which this module
 * wraps once, before the engine is loaded, to report to the recorder that
 * is listening:
 *
 * - `enter` (update): a token entered a node: the one update that sets both
 *   `activityId` and the next `step` (engine/enter.ts, step());
 * - `joined` (update): a token waiting at a join went on (engine/joins.ts;
 *   the tokens the join consumed ended just before);
 * - `create` (newToken): a new token at a node (a fork, a spawned boundary
 *   path, a subprocess's child, an event subprocess);
 * - `end` (end): a token ended (ENDED) or was cancelled (CANCELLED) where it stood.
 *
 * It changes nothing the engine does. Under jest, modules are CommonJS
 * objects whose exports may be reassigned; under tsx (the bench) they are
 * getters, so the module's cached exports are replaced before enter.ts
 * first loads it. `assertTracing` fails loudly when nothing was seen (an
 * engine change that moved node entries elsewhere).
 */
import type { Run } from '../../../functions/src/engine/run';
import type { ExecutionState } from '../../../functions/src/engine/state';

/** Where an event happened: the instance, the token, the node, and the model the instance runs (its key: `p`, a callee, an item body `p#activity`). */
interface At {
  readonly instance: string;
  readonly model: string;
  readonly token: string;
  readonly node: string;
  /** The token's step (its node entries so far) after the event. */
  readonly step: number;
}

export type TraceEvent =
  | (At & { readonly kind: 'enter' })
  | (At & { readonly kind: 'create'; readonly parent: string | undefined })
  | (At & { readonly kind: 'end'; readonly status: string })
  | (At & { readonly kind: 'joined' });

type Update = (run: Run, execution: ExecutionState, changes: Partial<ExecutionState>) => ExecutionState;
type NewToken = (
  run: Run,
  id: string,
  activityId: string,
  parentId: string | undefined,
  fields?: Partial<ExecutionState>,
) => ExecutionState | null;
type End = (run: Run, execution: ExecutionState, status: 'ENDED' | 'CANCELLED') => void;

let listener: ((event: TraceEvent) => void) | null = null;

/** The three exports of engine/run.ts the other engine modules move tokens with, wrapped to report what they do. */
const wrappers = {
  update:
    (original: Update): Update =>
    (run, execution, changes) => {
      const next = original(run, execution, changes);
      if (listener === null) return next;
      const base = {
        instance: run.instance.id,
        model: run.model.key,
        token: next.id,
        node: next.activityId,
        step: next.step,
      };
      if ('activityId' in changes && 'step' in changes && changes.step === execution.step + 1)
        listener({ kind: 'enter', ...base });
      else if (changes.status === 'ACTIVE' && 'arrivedBy' in changes && execution.status === 'WAITING_JOIN')
        listener({ kind: 'joined', ...base });
      return next;
    },
  newToken:
    (original: NewToken): NewToken =>
    (run, id, activityId, parentId, fields) => {
      const token = original(run, id, activityId, parentId, fields);
      if (listener !== null && token !== null)
        listener({
          kind: 'create',
          instance: run.instance.id,
          model: run.model.key,
          token: token.id,
          node: token.activityId,
          step: token.step,
          parent: parentId,
        });
      return token;
    },
  end:
    (original: End): End =>
    (run, execution, status) => {
      original(run, execution, status);
      listener?.({
        kind: 'end',
        instance: run.instance.id,
        model: run.model.key,
        token: execution.id,
        node: execution.activityId,
        step: execution.step,
        status,
      });
    },
};

const RUN_MODULE = require.resolve('../../../functions/src/engine/run');
const ENTER_MODULE = require.resolve('../../../functions/src/engine/enter');
const TRACED = Symbol.for('reference-test/traced');

function install(): void {
  const loaded = require(RUN_MODULE) as Record<string | symbol, unknown>;
  if (loaded[TRACED] === true) return;
  const wrapped: Record<string, unknown> = {};
  for (const [name, wrap] of Object.entries(wrappers)) {
    if (typeof loaded[name] !== 'function')
      throw new Error(`engine/run.ts exports no function ${name} (see our-trace.ts)`);
    wrapped[name] = (wrap as (f: unknown) => unknown)(loaded[name]);
  }
  if (Object.getOwnPropertyDescriptor(loaded, 'update')?.writable === true) {
    Object.assign(loaded, wrapped, { [TRACED]: true });
    return;
  }
  // Getters (tsx): the engine must not have bound run.ts's exports yet.
  const cached = require.cache[RUN_MODULE];
  if (cached === undefined || require.cache[ENTER_MODULE] !== undefined)
    throw new Error('our-trace.ts must be imported before the engine core (engine/enter.ts) is loaded');
  const copy: Record<string | symbol, unknown> = { [TRACED]: true };
  for (const name of Object.keys(loaded)) copy[name] = loaded[name];
  cached.exports = Object.assign(copy, wrapped);
}

install();

/** Runs `fn` with `record` listening to every token change; nested or concurrent use is an error. */
export function recording<T>(record: (event: TraceEvent) => void, fn: () => T): T {
  if (listener !== null) throw new Error('a trace is already being recorded');
  listener = record;
  try {
    return fn();
  } finally {
    listener = null;
  }
}

/** Async variant for the store (Firestore transactions): one recording at a time. */
export async function recordingAsync<T>(record: (event: TraceEvent) => void, fn: () => Promise<T>): Promise<T> {
  if (listener !== null) throw new Error('a trace is already being recorded');
  listener = record;
  try {
    return await fn();
  } finally {
    listener = null;
  }
}

/** Throws unless `events` holds the entry into `startEvent` that every start makes: the hook is live. */
export function assertTracing(events: readonly TraceEvent[], startEvent: string): void {
  if (!events.some((e) => e.kind === 'enter' && e.node === startEvent))
    throw new Error(
      `our-trace recorded no entry into ${startEvent}: engine/run.ts's update no longer sees node entries (see our-trace.ts)`,
    );
}
