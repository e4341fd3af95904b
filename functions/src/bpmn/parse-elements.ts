/**
 * Reading the elements a token waits in or is thrown out of: user tasks,
 * error and message boundary events, embedded and event subprocesses.
 * Beside parse-model.ts, which calls them from its element switch.
 */
import { type EventTrigger, type JobDefinition, type MessageWaitNode, ModelError } from './model';
import type { NodeDraft } from './draft';
import { timerDefinition } from './parse-timer';
import { type Element, elements, idOf, isElement, text, VARIABLE_NAME, xmlName } from './read';
import { calledElementOf, jobDefinitionOf, subscriptionKeyOf, userTaskOf } from './zeebe';

/** A message wait's message (`messageRef`, by name) and `inbox:correlationKey` (a variable name), or the refusal. */
export function messageWait(
  element: Element,
  kind: MessageWaitNode['kind'],
  messageRef: unknown,
): Omit<MessageWaitNode, 'incoming' | 'outgoing'> {
  return {
    kind,
    id: idOf(element),
    name: text(element, 'name'),
    ...messageKey(element, messageRef),
    boundaryEventIds: [],
  };
}

/** The message an event waits for, and where its key comes from, as every message wait stores them. */
type MessageKey = Pick<
  MessageWaitNode,
  'messageName' | 'correlationVariable' | 'correlationExpression' | 'correlationKeyText'
>;

/** The message `messageRef` names and the key: `inbox:correlationKey` on the event, else the message's `zeebe:subscription`. */
function messageKey(element: Element, messageRef: unknown): MessageKey {
  const id = idOf(element);
  if (!isElement(messageRef))
    throw new ModelError('missing messageRef: refer to a bpmn:message named like the awaited message', id);
  if (messageRef.$type !== 'bpmn:Message')
    throw new ModelError(`messageRef ${idOf(messageRef)} is a ${xmlName(messageRef)}, not a message`, id);
  const messageName = text(messageRef, 'name');
  if (messageName === null)
    throw new ModelError(`message ${idOf(messageRef)} has no name: incoming messages are matched by name`, id);
  const correlationVariable = text(element, 'correlationKey');
  if (correlationVariable === null) {
    const zeebe = subscriptionKeyOf(messageRef, id);
    if (zeebe !== null) return { messageName, ...zeebe };
    throw new ModelError(
      `missing inbox:correlationKey: name the process variable the message's correlation key must equal (or give message ${idOf(messageRef)} a zeebe:subscription correlationKey)`,
      id,
    );
  }
  if (!VARIABLE_NAME.test(correlationVariable)) {
    throw new ModelError(
      `inbox:correlationKey "${correlationVariable}" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)`,
      id,
    );
  }
  return { messageName, correlationVariable };
}

/** A user task: who may do it and its form, stored as written (`inbox:assignee`, `inbox:candidateGroups`, `inbox:formKey`). */
export function userTask(element: Element, id: string, name: string | null): NodeDraft {
  const groups = text(element, 'candidateGroups');
  // Camunda 8's assignment and form, where the inbox attributes say nothing.
  const zeebe = userTaskOf(element);
  const candidateGroups = groups === null ? [] : groups.split(',').flatMap((g) => (g.trim() === '' ? [] : [g.trim()]));
  return {
    kind: 'userTask',
    id,
    name,
    assignee: text(element, 'assignee') ?? zeebe?.assignee ?? null,
    candidateGroups: candidateGroups.length > 0 ? candidateGroups : (zeebe?.candidateGroups ?? []),
    formKey: text(element, 'formKey') ?? zeebe?.formKey ?? null,
    ...(zeebe === undefined || zeebe.candidateUsers.length === 0 ? {} : { candidateUsers: zeebe.candidateUsers }),
    boundaryEventIds: [],
  };
}

/**
 * The code of an error or escalation event definition's `errorRef` /
 * `escalationRef` (`errorCode` / `escalationCode` of the element it names);
 * null without a ref (a catcher of every code).
 */
function codeOf(definition: Element, id: string, kind: 'error' | 'escalation'): string | null {
  const ref = definition[`${kind}Ref`];
  if (ref === undefined) return null;
  const type = kind === 'error' ? 'bpmn:Error' : 'bpmn:Escalation';
  if (!isElement(ref) || ref.$type !== type)
    throw new ModelError(`${kind}Ref names no bpmn:${kind}: refer to one with an ${kind}Code`, id);
  const code = text(ref, `${kind}Code`);
  if (code === null)
    throw new ModelError(`bpmn:${kind} ${idOf(ref)} has no ${kind}Code: ${kind}s are caught by their code`, id);
  return code;
}

/** The errorCode of an errorEventDefinition's errorRef; null without errorRef (a boundary event that catches every code). */
export const errorCodeOf = (definition: Element, id: string): string | null => codeOf(definition, id, 'error');

/** The escalationCode of an escalationEventDefinition's escalationRef; null without escalationRef. */
export const escalationCodeOf = (definition: Element, id: string): string | null =>
  codeOf(definition, id, 'escalation');

/** An error boundary event: always interrupting; catches its errorRef's code, or every code without errorRef. */
export function boundaryError(element: Element, definition: Element, id: string, name: string | null): NodeDraft {
  const attachedToId = attachedTo(element, id);
  if (element.cancelActivity === false)
    throw new ModelError(
      'a non-interrupting error boundary event: an error always ends the activity that threw it',
      id,
    );
  return { kind: 'boundaryError', id, name, attachedToId, errorCode: errorCodeOf(definition, id) };
}

/** The attached activity's id of a boundary event, or the refusal. */
function attachedTo(element: Element, id: string): string {
  const attached = element.attachedToRef;
  const attachedToId = isElement(attached) ? text(attached, 'id') : null;
  if (attachedToId === null) throw new ModelError('a boundary event without attachedToRef: name the task it is on', id);
  return attachedToId;
}

/** A message boundary event: its message and `inbox:correlationKey`, as a message wait reads them. */
export function boundaryMessage(element: Element, definition: Element, id: string, name: string | null): NodeDraft {
  const cancelActivity = element.cancelActivity !== false;
  return {
    kind: 'boundaryMessage',
    id,
    name,
    attachedToId: attachedTo(element, id),
    cancelActivity,
    ...messageKey(element, definition.messageRef),
  };
}

/** The trigger of an event subprocess, from its one start event's one definition. */
function eventTrigger(start: Element, id: string): { trigger: EventTrigger; interrupting: boolean } {
  const startId = idOf(start);
  const definitions = elements(start, 'eventDefinitions');
  const [definition, second] = definitions;
  const interrupting = start.isInterrupting !== false;
  if (definition === undefined || second !== undefined)
    throw new ModelError(
      `the start event of event subprocess ${id} needs exactly one message, timer or error event definition (found ${definitions.length})`,
      startId,
    );
  switch (definition.$type) {
    case 'bpmn:ErrorEventDefinition':
      if (!interrupting)
        throw new ModelError('a non-interrupting error start event: an error always ends what threw it', startId);
      return { trigger: { kind: 'error', errorCode: errorCodeOf(definition, startId) }, interrupting };
    case 'bpmn:MessageEventDefinition':
      return { trigger: { kind: 'message', ...messageKey(start, definition.messageRef) }, interrupting };
    case 'bpmn:EscalationEventDefinition':
      return { trigger: { kind: 'escalation', escalationCode: escalationCodeOf(definition, startId) }, interrupting };
    case 'bpmn:TimerEventDefinition': {
      const timer = timerDefinition(definition, startId);
      if (timer.type === 'timeCycle' && interrupting)
        throw new ModelError(
          'timeCycle on an interrupting start event: it could fire only once; make it isInterrupting="false" or use timeDuration',
          startId,
        );
      return { trigger: { kind: 'timer', timer }, interrupting };
    }
    default:
      throw new ModelError(
        `an event subprocess started by ${xmlName(definition)}: message, timer, error and escalation start events are supported`,
        startId,
      );
  }
}

/** An embedded subprocess with exactly one none start event inside; an event subprocess, with one triggered start event. */
export function subProcess(element: Element, id: string, name: string | null): NodeDraft {
  if (element.triggeredByEvent === true) {
    const starts = elements(element, 'flowElements').filter((e) => e.$type === 'bpmn:StartEvent');
    const [start, second] = starts;
    if (start === undefined || second !== undefined)
      throw new ModelError(`an event subprocess starts at exactly one start event (found ${starts.length})`, id);
    return { kind: 'eventSubProcess', id, name, startEventId: idOf(start), ...eventTrigger(start, id) };
  }
  const starts = elements(element, 'flowElements').filter((e) => e.$type === 'bpmn:StartEvent');
  const [start, second] = starts;
  if (start === undefined)
    throw new ModelError('a subprocess without a start event: draw one none start event in it', id);
  if (second !== undefined || elements(start, 'eventDefinitions').length > 0)
    throw new ModelError(
      `a subprocess starts at exactly one none start event (found ${starts.map(idOf).join(', ')}${second === undefined ? ' with an event definition' : ''})`,
      id,
    );
  return { kind: 'subProcess', id, name, startEventId: idOf(start), boundaryEventIds: [] };
}

/** A call activity: the process it calls, by `calledElement` (a process id of the same app; checked when the app loads). */
export function callActivity(element: Element, id: string, name: string | null): NodeDraft {
  const zeebe = calledElementOf(element, id);
  // Trimmed: a process id never holds a space, so `calledElement=" child "` can only mean child (docs/bpmn-coverage.md).
  const written = (text(element, 'calledElement') ?? zeebe?.processId ?? '').trim();
  const calledProcess = written === '' ? null : written;
  if (calledProcess === null)
    throw new ModelError(
      'a callActivity without calledElement: name the id of the process it starts (a model of the same app)',
      id,
    );
  const returns = zeebe?.propagateChildVariables === false ? { propagateChildVariables: false as const } : {};
  return { kind: 'callActivity', id, name, calledProcess, ...returns, boundaryEventIds: [] };
}

/**
 * What a message throw or end event (its one messageEventDefinition's
 * messageRef) or a send task (its messageRef) publishes: the message's name.
 */
export function sentMessage<K extends 'messageThrowEvent' | 'messageEndEvent' | 'sendTask'>(
  element: Element,
  kind: K,
  definition?: Element,
): { kind: K; id: string; name: string | null; messageName: string | null; job?: JobDefinition } {
  const id = idOf(element);
  const ref: unknown = definition === undefined ? element.messageRef : definition.messageRef;
  const job = jobDefinitionOf(element, id);
  const withJob = job === undefined ? {} : { job };
  // Camunda 8 runs a message throw or end event by a worker of its task type; the message is the worker's business.
  if (ref === undefined && job !== undefined) return { kind, id, name: text(element, 'name'), messageName: null, job };
  if (!isElement(ref) || ref.$type !== 'bpmn:Message')
    throw new ModelError(
      'missing messageRef: refer to the bpmn:message it publishes (or give it a zeebe:taskDefinition type whose handler publishes)',
      id,
    );
  const messageName = text(ref, 'name');
  if (messageName === null)
    throw new ModelError(`message ${idOf(ref)} has no name: a message is published under its name`, id);
  return { kind, id, name: text(element, 'name'), messageName, ...withJob };
}

/** An escalation throw or end event: the code it throws (an escalationRef is required). */
export function escalationThrow(
  kind: 'escalationThrowEvent' | 'escalationEndEvent',
  definition: Element,
  id: string,
  name: string | null,
): NodeDraft {
  const escalationCode = escalationCodeOf(definition, id);
  if (escalationCode === null)
    throw new ModelError('an escalation without escalationRef: refer to a bpmn:escalation with an escalationCode', id);
  return { kind, id, name, escalationCode };
}

/** An escalation boundary event: interrupting unless cancelActivity="false". */
export function boundaryEscalation(element: Element, definition: Element, id: string, name: string | null): NodeDraft {
  return {
    kind: 'boundaryEscalation',
    id,
    name,
    attachedToId: attachedTo(element, id),
    escalationCode: escalationCodeOf(definition, id),
    cancelActivity: element.cancelActivity !== false,
  };
}
