/**
 * Reading start events: a none start event, a message start event (its key
 * from `inbox:correlationKey` or the message's `zeebe:subscription`) and a
 * timer start event. Beside parse-model.ts, which calls it from its element
 * switch.
 */
import { ModelError } from './model';
import type { NodeDraft } from './draft';
import { timerDefinition } from './parse-timer';
import { type Element, idOf, isElement, text, VARIABLE_NAME, xmlName } from './read';
import { startSchedule } from './timer';
import { subscriptionKeyOf } from './zeebe';

/**
 * A none start event, or a message start event: one messageEventDefinition
 * whose messageRef names a bpmn:message, and `inbox:correlationKey`, the
 * variable the starting message's correlation key is stored into (the
 * business key is that key too); a timer start event. Null for any other
 * definition, which the caller refuses.
 */
export function startEvent(
  element: Element,
  id: string,
  name: string | null,
  definitions: readonly Element[],
  camunda8: boolean,
): NodeDraft | null {
  const correlationVariable = text(element, 'correlationKey');
  const [definition] = definitions;
  if (definition === undefined) {
    if (element.correlationKey !== undefined) {
      throw new ModelError(
        'inbox:correlationKey on a none start event: only a message start event (one messageEventDefinition) takes one',
        id,
      );
    }
    return { kind: 'startEvent', id, name };
  }
  if (definition.$type === 'bpmn:TimerEventDefinition' && definitions.length === 1)
    return timerStartEvent(definition, id, name);
  if (definition.$type !== 'bpmn:MessageEventDefinition' || definitions.length !== 1) return null;
  const messageRef = definition.messageRef;
  if (!isElement(messageRef))
    throw new ModelError(
      'missing messageRef: refer to a bpmn:message named like the message that starts the process',
      id,
    );
  if (messageRef.$type !== 'bpmn:Message')
    throw new ModelError(`messageRef ${idOf(messageRef)} is a ${xmlName(messageRef)}, not a message`, id);
  const messageName = text(messageRef, 'name');
  if (messageName === null)
    throw new ModelError(`message ${idOf(messageRef)} has no name: incoming messages are matched by name`, id);
  if (correlationVariable === null) {
    // Camunda 8 reads no key on a message start: the message's key is the business key, and with =variable stored there too.
    const zeebe = subscriptionKeyOf(messageRef, id);
    if (zeebe !== null || camunda8)
      return {
        kind: 'messageStartEvent',
        id,
        name,
        messageName,
        correlationVariable: zeebe?.correlationVariable ?? null,
        ...(zeebe === null ? {} : { correlationKeyText: zeebe.correlationKeyText }),
      };
    throw new ModelError(
      "missing inbox:correlationKey: name the process variable the starting message's correlation key is stored into",
      id,
    );
  }
  if (!VARIABLE_NAME.test(correlationVariable)) {
    throw new ModelError(
      `inbox:correlationKey "${correlationVariable}" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)`,
      id,
    );
  }
  return { kind: 'messageStartEvent', id, name, messageName, correlationVariable };
}

/** A timer start event: a literal timeDate or timeCycle (R/<duration> too), checked now. */
function timerStartEvent(definition: Element, id: string, name: string | null): NodeDraft {
  const timer = timerDefinition(definition, id, true);
  if (timer.variable !== null || timer.value === null)
    throw new ModelError(
      `a timer start event with \${${timer.variable ?? ''}}: no instance has variables before it starts; write the date or cycle`,
      id,
    );
  const schedule = startSchedule(timer.type, timer.value, new Date(0));
  if (!schedule.ok) throw new ModelError(schedule.error, id);
  return { kind: 'timerStartEvent', id, name, timer };
}
