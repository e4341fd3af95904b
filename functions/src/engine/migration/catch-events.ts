/**
 * What a migrated token waits with besides its own work: its own timer or
 * waiting point (a timer catch event, a message wait, an event
 * subprocess's standby trigger) follows it to the target element; the
 * catch events on its element (timer and message boundary events) are what
 * the target draws. A boundary event of the source that the target draws on
 * the target element, by the mapping or the same id and of the same kind,
 * keeps its timer (its due time) or its waiting point (when its message and
 * key are unchanged; else it is closed and opened as the target draws it).
 * One the target does not draw there is removed; one only the target draws
 * is set now, as a token arriving would set it. Pure.
 */
import { resolveTimer } from '../../bpmn/timer';
import type { FlowNode, ProcessModel } from '../../bpmn/model';
import { waitKey } from '../expressions';
import { timerId } from '../ids';
import type { ExecutionState, GatewayWait, InstanceState, TimerState, WaitingPoint } from '../state';
import { keyDrawn } from './likeness';

/** A change to a correlation key document's waiting points. */
export type PointChange =
  /** The token's point for `activityId` now names the target element (and the element it waits beside). */
  | {
      readonly op: 'rewrite';
      readonly correlationKey: string;
      readonly executionId: string;
      readonly activityId: string;
      readonly to: { readonly activityId: string; readonly boundaryOf?: string };
    }
  | {
      readonly op: 'remove';
      readonly correlationKey: string;
      readonly executionId: string;
      readonly activityId: string;
    }
  | { readonly op: 'add'; readonly point: WaitingPoint };

/** A kept timer's new element fields. */
export interface TimerRewrite {
  readonly id: string;
  readonly activityId: string;
  readonly waitingAt: string;
}

export interface CatchChanges {
  /** The token's fields after: `timerIds`, `boundaryWaits` (absent when none). */
  readonly fields: Partial<Pick<ExecutionState, 'timerIds' | 'boundaryWaits'>>;
  readonly keepTimers: readonly TimerRewrite[];
  readonly cancelTimers: readonly string[];
  readonly createTimers: readonly TimerState[];
  readonly points: readonly PointChange[];
  readonly effects: readonly string[];
  readonly refusals: readonly string[];
}

/** What {@link catchChanges} reads. */
export interface CatchInput {
  readonly instance: InstanceState;
  readonly token: ExecutionState;
  readonly from: FlowNode;
  readonly to: FlowNode;
  readonly target: ProcessModel;
  /** The token's PENDING timers, as stored. */
  readonly timers: readonly TimerState[];
  readonly targetOf: (sourceId: string) => string;
  readonly now: Date;
}

const boundaries = (model: ProcessModel, n: FlowNode): FlowNode[] =>
  ('boundaryEventIds' in n ? n.boundaryEventIds : [])
    .map((id) => (Object.hasOwn(model.nodes, id) ? model.nodes[id] : undefined))
    .filter((b): b is FlowNode => b !== undefined && (b.kind === 'boundaryTimer' || b.kind === 'boundaryMessage'));

/** Statuses in which a token's element has armed its boundary events (waits.ts, scopes.ts, items.ts). */
const ARMED: ReadonlySet<ExecutionState['status']> = new Set([
  'WAITING_JOB',
  'WAITING_MESSAGE',
  'WAITING_USER',
  'WAITING_CALL',
  'WAITING_SCOPE',
  'WAITING_ITEMS',
]);

/** The changes to what `token` waits with when it moves from `from` to `to`. */
export function catchChanges(input: CatchInput, sourceModel: ProcessModel): CatchChanges {
  const { token, from, to, target, now } = input;
  const keep: TimerRewrite[] = [];
  const cancel: string[] = [];
  const create: TimerState[] = [];
  const points: PointChange[] = [];
  const effects: string[] = [];
  const refusals: string[] = [];
  const timerIds: string[] = [];
  const waits: GatewayWait[] = [];
  const due = (t: TimerState): string => t.dueAt.toISOString();

  // Its own timer (a timer catch event, an event subprocess's timer start) and its own waiting point follow it.
  for (const t of input.timers.filter((x) => x.activityId === from.id)) {
    keep.push({ id: t.id, activityId: to.id, waitingAt: to.id });
    timerIds.push(t.id);
    effects.push(`its timer ${t.id} stays due at ${due(t)}`);
  }
  if (token.status === 'WAITING_MESSAGE' && token.waitingFor !== null) {
    const { messageName, correlationKey } = token.waitingFor;
    if (from.id !== to.id)
      points.push({
        op: 'rewrite',
        correlationKey,
        executionId: token.id,
        activityId: from.id,
        to: { activityId: to.id },
      });
    effects.push(`it keeps waiting for ${messageName} with key ${correlationKey}`);
  }

  const armed = ARMED.has(token.status);
  const drawn = armed ? boundaries(target, to) : [];
  const matched = new Set<string>();
  for (const b of armed ? boundaries(sourceModel, from) : []) {
    const id = input.targetOf(b.id);
    const tb = drawn.find((d) => d.id === id && d.kind === b.kind);
    if (tb === undefined && id !== b.id)
      refusals.push(
        `token ${token.id} at ${from.id}: boundary event ${b.id} is mapped to ${id}, which is no ${b.kind} on ${to.id}`,
      );
    if (tb !== undefined) matched.add(tb.id);
    if (b.kind === 'boundaryTimer') {
      for (const t of input.timers.filter((x) => x.activityId === b.id)) {
        if (tb === undefined) {
          cancel.push(t.id);
          effects.push(`its boundary timer ${b.id} (due ${due(t)}) is removed: the target draws none on ${to.id}`);
          continue;
        }
        keep.push({ id: t.id, activityId: tb.id, waitingAt: to.id });
        timerIds.push(t.id);
        const redrawn =
          tb.kind === 'boundaryTimer' && tb.timer.text !== b.timer.text
            ? ` (the target draws ${tb.timer.text}; the due time stays)`
            : '';
        effects.push(`its boundary timer ${tb.id} stays due at ${due(t)}${redrawn}`);
      }
      continue;
    }
    if (b.kind !== 'boundaryMessage') continue;
    for (const w of (token.boundaryWaits ?? []).filter((x) => x.activityId === b.id)) {
      const same = tb?.kind === 'boundaryMessage' && tb.messageName === b.messageName && keyDrawn(tb) === keyDrawn(b);
      if (tb !== undefined && same) {
        points.push({
          op: 'rewrite',
          correlationKey: w.correlationKey,
          executionId: token.id,
          activityId: b.id,
          to: { activityId: tb.id, boundaryOf: to.id },
        });
        waits.push({ ...w, activityId: tb.id });
        effects.push(`its boundary event ${tb.id} keeps waiting for ${w.messageName} with key ${w.correlationKey}`);
        continue;
      }
      points.push({ op: 'remove', correlationKey: w.correlationKey, executionId: token.id, activityId: b.id });
      effects.push(`its boundary event ${b.id} stops waiting for ${w.messageName} with key ${w.correlationKey}`);
      if (tb !== undefined) matched.delete(tb.id);
    }
  }
  // What only the target draws on the element (or draws anew): set now, as a token arriving sets it.
  for (const tb of drawn.filter((d) => !matched.has(d.id))) {
    if (tb.kind === 'boundaryTimer') {
      const resolved = resolveTimer(tb.timer, input.instance.variables, now);
      if (typeof resolved === 'string') {
        refusals.push(
          `token ${token.id} at ${from.id}: the target's boundary timer ${tb.id} cannot be set: ${resolved}`,
        );
        continue;
      }
      const timer: TimerState = {
        id: timerId(token.id, token.step, tb.id, 1),
        processInstanceId: input.instance.id,
        executionId: token.id,
        activityId: tb.id,
        waitingAt: to.id,
        step: token.step,
        dueAt: resolved.dueAt,
        occurrence: 1,
        repetitionsLeft: resolved.repetitionsLeft,
        intervalMs: resolved.intervalMs,
        status: 'PENDING',
        createdAt: now,
        firedAt: null,
      };
      create.push(timer);
      timerIds.push(timer.id);
      effects.push(`the target's boundary timer ${tb.id} is set, due at ${due(timer)}`);
    } else if (tb.kind === 'boundaryMessage') {
      const found = waitKey(tb, input.instance.variables, ` (boundary event ${tb.id})`);
      if (!('key' in found)) {
        refusals.push(
          `token ${token.id} at ${from.id}: the target's boundary event ${tb.id} cannot wait: ${found.message}`,
        );
        continue;
      }
      const wait: GatewayWait = { messageName: tb.messageName, correlationKey: found.key, activityId: tb.id };
      waits.push(wait);
      points.push({
        op: 'add',
        point: {
          ...wait,
          processInstanceId: input.instance.id,
          executionId: token.id,
          boundaryOf: to.id,
          standby: true,
          createdAt: now,
        },
      });
      effects.push(`the target's boundary event ${tb.id} starts waiting for ${tb.messageName} with key ${found.key}`);
    }
  }
  // Timers of the token that belong to nothing above (none expected) stay as they are.
  const known = new Set([...keep.map((k) => k.id), ...cancel]);
  for (const t of input.timers) if (!known.has(t.id)) timerIds.push(t.id);
  const handled = new Set(armed ? boundaries(sourceModel, from).map((b) => b.id) : []);
  waits.push(...(token.boundaryWaits ?? []).filter((w) => !handled.has(w.activityId)));
  const fields = {
    ...(timerIds.length === 0 ? {} : { timerIds }),
    ...(waits.length === 0 ? {} : { boundaryWaits: waits }),
  };
  return { fields, keepTimers: keep, cancelTimers: cancel, createTimers: create, points, effects, refusals };
}
