/**
 * Reading the timer elements of a BPMN file: a timerEventDefinition's
 * expression (literal or `${variable}` with `inbox:default`), timer catch
 * events, timer boundary events and event-based gateways. Beside
 * parse-model.ts, which calls it from its element switch; every literal and
 * default is checked here with bpmn/timer.ts, so a bad one fails the load.
 */
import type BpmnModdle from 'bpmn-moddle';
import {
  ModelError,
  type BoundaryTimerNode,
  type EventBasedGatewayNode,
  type TimerCatchNode,
  type TimerDefinition,
} from './model';
import { resolveText } from './timer';
import { feelBody, feelSyntaxError, feelVariable, quoteFeel } from './feel';

type Element = BpmnModdle.ModdleElement;
type WithoutFlows<T> = Omit<T, 'incoming' | 'outgoing'>;

const TIMER_TYPES = ['timeDuration', 'timeDate', 'timeCycle'] as const;
const VARIABLE = /^\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}$/;

const isElement = (value: unknown): value is Element =>
  typeof value === 'object' && value !== null && typeof (value as { $type?: unknown }).$type === 'string';

const stringOf = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** A literal or default must be a valid text of its form, checked at load with the same code the engine runs. */
function checkText(type: TimerDefinition['type'], text: string, what: string, id: string): void {
  const resolved = resolveText(type, text, new Date(0));
  if (!resolved.ok) throw new ModelError(`${type} ${what}: ${resolved.error}`, id);
}

/** The timer of a timerEventDefinition on event `id`: exactly one of timeDuration, timeDate and timeCycle. */
export function timerDefinition(definition: Element, id: string, onStart = false): TimerDefinition {
  for (const attribute of Object.keys(definition.$attrs ?? {})) {
    if (attribute.slice(attribute.indexOf(':') + 1) === 'default') {
      throw new ModelError(
        `attribute ${attribute} of the timerEventDefinition is not in the inbox namespace; declare xmlns:inbox and write inbox:default`,
        id,
      );
    }
  }
  const present = TIMER_TYPES.filter((type) => isElement(definition[type]));
  const [type, second] = present;
  if (type === undefined)
    throw new ModelError(
      'a timerEventDefinition without timeDuration, timeDate or timeCycle: say when the timer is due',
      id,
    );
  if (second !== undefined)
    throw new ModelError(`a timerEventDefinition with ${present.join(' and ')}: give exactly one`, id);
  const expression = definition[type] as Element;
  const text = (stringOf(expression.body) ?? '').trim();
  if (text === '') throw new ModelError(`an empty ${type}: write an ISO 8601 text or \${variable}`, id);
  const fallback = stringOf(definition.default);
  const feel = feelBody(text);
  if (feel !== null) return feelTimer(type, text, feel, fallback, id, onStart);
  const variable = VARIABLE.exec(text)?.[1] ?? null;
  if (variable === null) {
    if (text.includes('${') || text.includes('#{'))
      throw new ModelError(`${type} "${text}": only a literal or \${variableName} is supported, no expressions`, id);
    if (fallback !== null)
      throw new ModelError(
        `inbox:default "${fallback}" on a literal ${type}: a default applies only to \${variable}`,
        id,
      );
    // A start event's schedule is checked by its own rules (bpmn/timer.ts startSchedule).
    if (!onStart) checkText(type, text, `"${text}"`, id);
    return { type, text, variable: null, value: text };
  }
  if (fallback !== null) checkText(type, fallback, `default "${fallback}"`, id);
  return { type, text, variable, value: fallback };
}

/**
 * A Camunda 8 timer: `=days` reads a variable as `${days}` does (with
 * `inbox:default`); any other FEEL (`=duration("P" + string(days) + "D")`)
 * is checked now and evaluated when the timer is set, to a duration, a
 * date-time or a cycle text.
 */
function feelTimer(
  type: TimerDefinition['type'],
  text: string,
  body: string,
  fallback: string | null,
  id: string,
  onStart: boolean,
): TimerDefinition {
  const variable = feelVariable(body);
  if (variable !== null) {
    if (fallback !== null) checkText(type, fallback, `default "${fallback}"`, id);
    return { type, text, variable, value: fallback };
  }
  if (onStart)
    throw new ModelError(
      `a timer start event with FEEL ${quoteFeel(body)}: no instance has variables yet; write the date or cycle`,
      id,
    );
  if (fallback !== null)
    throw new ModelError(`inbox:default "${fallback}" on a FEEL ${type}: a default applies only to a variable`, id);
  const error = feelSyntaxError(body);
  if (error !== null) throw new ModelError(`${type}: ${error}`, id);
  return { type, text, variable: null, value: null, expression: body };
}

/** An intermediateCatchEvent whose one definition is a timerEventDefinition. */
export function timerCatchEvent(
  element: Element,
  definition: Element,
  id: string,
  name: string | null,
): WithoutFlows<TimerCatchNode> {
  if (element.correlationKey !== undefined)
    throw new ModelError('inbox:correlationKey on a timer catch event: only message waits correlate', id);
  const timer = timerDefinition(definition, id);
  if (timer.type === 'timeCycle')
    throw new ModelError(
      'timeCycle on a timer catch event: a cycle repeats, so it is only allowed on a non-interrupting boundary event',
      id,
    );
  return { kind: 'timerCatchEvent', id, name, timer };
}

/** A boundaryEvent: a timer on a task (the graph rules check the task, check-events.ts). */
export function boundaryTimer(
  element: Element,
  definitions: readonly Element[],
  id: string,
  name: string | null,
): WithoutFlows<BoundaryTimerNode> {
  const [definition] = definitions;
  if (definition?.$type !== 'bpmn:TimerEventDefinition' || definitions.length !== 1) {
    const what = definitions.map((d) => d.$type.replace('bpmn:', '')).join(' and ') || 'no event definition';
    throw new ModelError(
      `unsupported boundaryEvent with ${what}: only timer and error boundary events (one timerEventDefinition or errorEventDefinition) are supported`,
      id,
    );
  }
  const attached = element.attachedToRef;
  const attachedToId = isElement(attached) ? stringOf(attached.id) : null;
  if (attachedToId === null) throw new ModelError('a boundary event without attachedToRef: name the task it is on', id);
  const cancelActivity = element.cancelActivity !== false;
  const timer = timerDefinition(definition, id);
  if (timer.type === 'timeCycle' && cancelActivity) {
    throw new ModelError(
      'timeCycle on an interrupting boundary event: it could fire only once; make it cancelActivity="false" (a reminder) or use timeDuration',
      id,
    );
  }
  return { kind: 'boundaryTimer', id, name, attachedToId, cancelActivity, timer };
}

/** An eventBasedGateway that waits for the first of its events (exclusive, not instantiating). */
export function eventBasedGateway(
  element: Element,
  id: string,
  name: string | null,
): WithoutFlows<EventBasedGatewayNode> {
  if (element.instantiate === true)
    throw new ModelError('an instantiating event-based gateway is not supported: start with a message start event', id);
  if (element.eventGatewayType !== undefined && element.eventGatewayType !== 'Exclusive') {
    throw new ModelError(
      `eventGatewayType ${JSON.stringify(element.eventGatewayType)} is not supported: only Exclusive (the first event wins)`,
      id,
    );
  }
  return { kind: 'eventBasedGateway', id, name };
}
