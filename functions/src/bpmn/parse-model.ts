/**
 * Loads a BPMN 2.0 file into the engine's {@link ProcessModel}. Reading is
 * bpmn-moddle's job; this module decides what the engine supports and turns
 * everything else into a {@link ModelError} at load time, so that a model
 * either runs as drawn or does not load at all.
 */
import BpmnModdle from 'bpmn-moddle';
import { sha256Hex } from '../core/hash';
import { ModelError, type ProcessModel, type SequenceFlow } from './model';
import { parseCondition } from './condition';
import { checkGraph } from './check-graph';
import type { Draft, NodeDraft } from './draft';
import { attachBoundaryEvents } from './check-events';
import { boundaryTimer, eventBasedGateway, timerCatchEvent, timerDefinition } from './parse-timer';
import { startSchedule } from './timer';
import {
  boundaryError,
  boundaryEscalation,
  boundaryMessage,
  callActivity,
  escalationThrow,
  sentMessage,
  subProcess,
  userTask,
  errorCodeOf,
} from './parse-elements';
import {
  drawingOnly,
  type Element,
  elements,
  idOf,
  isElement,
  messageWait,
  text,
  VARIABLE_NAME,
  xmlName,
} from './read';
import inboxDescriptor from './inbox-moddle.json';
import { errorMessage } from '../core/errors';
import { loopOf } from './parse-loop';

const SUPPORTED =
  'supported are: startEvent (none, message or timer), endEvent (none, terminate, error, message or escalation), ' +
  'serviceTask, sendTask, businessRuleTask, userTask, receiveTask, manualTask, task, callActivity, ' +
  'subProcess (embedded, or an event subprocess), intermediateCatchEvent (message or timer), ' +
  'intermediateThrowEvent (none, message or escalation), boundaryEvent (timer, error, message or escalation), ' +
  'exclusiveGateway, inclusiveGateway, parallelGateway, eventBasedGateway, multiInstanceLoopCharacteristics, ' +
  'sequenceFlow (docs/bpmn-coverage.md)';
/** Elements of a process that only a diagram or a reader uses: ignored on purpose, never a reason to refuse. */
const DIAGRAM_ONLY: ReadonlySet<string> = new Set([
  'bpmn:DataObject',
  'bpmn:DataObjectReference',
  'bpmn:DataStoreReference',
]);
/** Our attributes by local name: seen outside our namespace, they are a namespace mistake, not foreign data. */
const OWN_ATTRIBUTES: ReadonlySet<string> = new Set(['async', 'correlationKey']);
function unsupported(element: Element, what = xmlName(element)): ModelError {
  return new ModelError(`unsupported element ${what}; ${SUPPORTED}`, idOf(element));
}

/** Moddle reports what it skipped as warnings; a skipped attribute would silently change behaviour, so each is fatal. */
function warningToError(warning: BpmnModdle.ImportWarning): ModelError {
  // An event definition is drawn as its event; name the event, which is what the modeller sees.
  const parent = warning.element?.$parent;
  const element =
    warning.element?.$type.endsWith('EventDefinition') === true && isElement(parent) ? parent : warning.element;
  const elementId = element === undefined ? null : text(element, 'id');
  const value = typeof warning.value === 'string' ? warning.value : '';
  if (warning.message.startsWith('unresolved reference')) {
    if (warning.property === 'bpmn:sourceRef' || warning.property === 'bpmn:targetRef') {
      return new ModelError(`dangling flow: ${warning.property.slice(5)} "${value}" names no element`, elementId);
    }
    if (warning.property === 'bpmn:messageRef')
      return new ModelError(`messageRef "${value}" names no bpmn:message`, elementId);
    if (warning.property === 'bpmn:attachedToRef')
      return new ModelError(`attachedToRef "${value}" names no element`, elementId);
  }
  return new ModelError(`${warning.message.replace(/\s+/g, ' ')} (the model must read without warnings)`, elementId);
}

async function readDefinitions(xml: string): Promise<Element> {
  let result: BpmnModdle.ParseResult;
  try {
    result = await new BpmnModdle({ inbox: inboxDescriptor }).fromXML(xml);
  } catch (error) {
    const message = errorMessage(error);
    throw new ModelError(`not readable as BPMN XML: ${message.replace(/\s+/g, ' ')}`);
  }
  const warning = result.warnings.find((w) => !drawingOnly(w.element));
  if (warning !== undefined) throw warningToError(warning);
  return result.rootElement;
}

function singleExecutableProcess(definitions: Element): Element {
  const processes = elements(definitions, 'rootElements').filter(
    (e) => e.$type === 'bpmn:Process' && e.isExecutable === true,
  );
  const [process] = processes;
  if (process === undefined)
    throw new ModelError('no executable process: mark exactly one bpmn:process isExecutable="true"');
  if (processes.length > 1) {
    throw new ModelError(
      `${processes.length} executable processes (${processes.map(idOf).join(', ')}): a file must hold exactly one`,
    );
  }
  return process;
}

/**
 * `inbox:async` is declared a String, not a Boolean: moddle reads a Boolean as
 * `value === 'true'`, so "True", "yes" or "1" would silently mean false.
 */
function asyncFlag(element: Element, id: string): boolean {
  const value = element.async;
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ModelError(`inbox:async must be "true" or "false", not ${JSON.stringify(value)}`, id);
}

const TASK_KINDS = {
  'bpmn:ServiceTask': 'serviceTask',
  'bpmn:SendTask': 'sendTask',
  'bpmn:BusinessRuleTask': 'businessRuleTask',
} as const;

/** One flow node without its flows, or an error for anything the engine cannot run. */
function toNode(element: Element): NodeDraft {
  const id = idOf(element);
  for (const attribute of Object.keys(element.$attrs ?? {})) {
    if (OWN_ATTRIBUTES.has(attribute.slice(attribute.indexOf(':') + 1))) {
      throw new ModelError(
        `attribute ${attribute} is not in the inbox namespace; declare xmlns:inbox="${inboxDescriptor.uri}"`,
        id,
      );
    }
  }
  const loop = loopOf(element, id);
  const node = plainNode(element, id);
  return loop === undefined ? node : { ...node, loop };
}

/** One flow node without its flows and its multi-instance characteristics. */
function plainNode(element: Element, id: string): NodeDraft {
  const definitions = elements(element, 'eventDefinitions');
  const name = text(element, 'name');
  switch (element.$type) {
    case 'bpmn:StartEvent':
      return startEvent(element, id, name, definitions);
    case 'bpmn:EndEvent': {
      const [definition, second] = definitions;
      if (definition === undefined) return { kind: 'endEvent', id, name, terminate: false };
      if (definition.$type === 'bpmn:TerminateEventDefinition' && second === undefined)
        return { kind: 'endEvent', id, name, terminate: true };
      if (definition.$type === 'bpmn:MessageEventDefinition' && second === undefined)
        return sentMessage(element, 'messageEndEvent', definition);
      if (definition.$type === 'bpmn:EscalationEventDefinition' && second === undefined)
        return escalationThrow('escalationEndEvent', definition, id, name);
      if (definition.$type === 'bpmn:ErrorEventDefinition' && second === undefined) {
        const errorCode = errorCodeOf(definition, id);
        if (errorCode === null)
          throw new ModelError(
            'an error end event without errorRef: refer to a bpmn:error with an errorCode, the code a boundary event catches',
            id,
          );
        return { kind: 'errorEndEvent', id, name, errorCode };
      }
      throw unsupported(element, `${xmlName(element)} with ${definitions.map(xmlName).join(' and ')}`);
    }
    case 'bpmn:SendTask':
      if (element.messageRef !== undefined)
        return { ...sentMessage(element, 'sendTask'), async: true, boundaryEventIds: [] };
      return { kind: 'sendTask', id, name, async: asyncFlag(element, id), boundaryEventIds: [] };
    case 'bpmn:ServiceTask':
    case 'bpmn:BusinessRuleTask':
      return { kind: TASK_KINDS[element.$type], id, name, async: asyncFlag(element, id), boundaryEventIds: [] };
    case 'bpmn:Task':
    case 'bpmn:ManualTask':
      return { kind: 'passThrough', element: element.$type === 'bpmn:Task' ? 'task' : 'manualTask', id, name };
    case 'bpmn:IntermediateThrowEvent':
      if (definitions[0]?.$type === 'bpmn:MessageEventDefinition' && definitions.length === 1)
        return sentMessage(element, 'messageThrowEvent', definitions[0]);
      if (definitions[0]?.$type === 'bpmn:EscalationEventDefinition' && definitions.length === 1)
        return escalationThrow('escalationThrowEvent', definitions[0], id, name);
      if (definitions.length > 0)
        throw unsupported(element, `intermediateThrowEvent with ${definitions.map(xmlName).join(' and ')}`);
      return { kind: 'passThrough', element: 'intermediateThrowEvent', id, name };
    case 'bpmn:UserTask':
      return userTask(element, id, name);
    case 'bpmn:ScriptTask':
      throw new ModelError(
        'a scriptTask runs code written in the model, which this engine never does: make it a serviceTask and register its handler in the app',
        id,
      );
    case 'bpmn:ParallelGateway':
      return { kind: 'parallelGateway', id, name };
    case 'bpmn:InclusiveGateway': {
      const defaultFlow = element.default;
      return { kind: 'inclusiveGateway', id, name, defaultFlowId: isElement(defaultFlow) ? idOf(defaultFlow) : null };
    }
    case 'bpmn:IntermediateCatchEvent': {
      const [definition] = definitions;
      if (definition?.$type === 'bpmn:TimerEventDefinition' && definitions.length === 1)
        return timerCatchEvent(element, definition, id, name);
      if (definition?.$type !== 'bpmn:MessageEventDefinition' || definitions.length !== 1) {
        throw unsupported(
          element,
          `intermediateCatchEvent with ${definitions.map(xmlName).join(' and ') || 'no event definition'}`,
        );
      }
      return messageWait(element, 'messageCatchEvent', definition.messageRef);
    }
    case 'bpmn:BoundaryEvent':
      if (definitions[0]?.$type === 'bpmn:ErrorEventDefinition' && definitions.length === 1)
        return boundaryError(element, definitions[0], id, name);
      if (definitions[0]?.$type === 'bpmn:MessageEventDefinition' && definitions.length === 1)
        return boundaryMessage(element, definitions[0], id, name);
      if (definitions[0]?.$type === 'bpmn:EscalationEventDefinition' && definitions.length === 1)
        return boundaryEscalation(element, definitions[0], id, name);
      return boundaryTimer(element, definitions, id, name);
    case 'bpmn:SubProcess':
      return subProcess(element, id, name);
    case 'bpmn:CallActivity':
      return callActivity(element, id, name);
    case 'bpmn:EventBasedGateway':
      return eventBasedGateway(element, id, name);
    case 'bpmn:ReceiveTask':
      return messageWait(element, 'receiveTask', element.messageRef);
    case 'bpmn:ExclusiveGateway': {
      const defaultFlow = element.default;
      return { kind: 'exclusiveGateway', id, name, defaultFlowId: isElement(defaultFlow) ? idOf(defaultFlow) : null };
    }
    default:
      throw unsupported(element);
  }
}

/**
 * A none start event, or a message start event: one messageEventDefinition
 * whose messageRef names a bpmn:message, and `inbox:correlationKey`, the
 * variable the starting message's correlation key is stored into (the
 * business key is that key too). Any other definition is refused.
 */
function startEvent(element: Element, id: string, name: string | null, definitions: readonly Element[]): NodeDraft {
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
  if (definition.$type !== 'bpmn:MessageEventDefinition' || definitions.length !== 1) {
    throw unsupported(element, `startEvent with ${definitions.map(xmlName).join(' and ')}`);
  }
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

/** The message start events by message name (checkGraph refuses two for one name, so each name is one node). */
function messageStartsOf(drafts: ReadonlyMap<string, Draft>): Record<string, string> {
  const starts = [...drafts.values()].flatMap((n) =>
    n.kind === 'messageStartEvent' ? [[n.messageName, n.id] as const] : [],
  );
  // fromEntries: a message named `__proto__` is an own key like any other.
  return Object.fromEntries(starts);
}

function toFlow(element: Element, nodes: ReadonlyMap<string, unknown>): SequenceFlow {
  const id = idOf(element);
  const end = (property: 'sourceRef' | 'targetRef'): string => {
    const ref = element[property];
    const refId = isElement(ref) ? text(ref, 'id') : null;
    if (refId === null || !nodes.has(refId)) {
      throw new ModelError(
        `dangling flow: ${property} ${refId === null ? 'is missing' : `"${refId}" is not a flow node of this process`}`,
        id,
      );
    }
    return refId;
  };
  const sourceId = end('sourceRef');
  const targetId = end('targetRef');
  const expression = element.conditionExpression;
  if (!isElement(expression)) return { id, sourceId, targetId, condition: null, conditionText: null };
  const conditionText = typeof expression.body === 'string' ? expression.body : '';
  try {
    return { id, sourceId, targetId, condition: parseCondition(conditionText), conditionText };
  } catch (error) {
    throw new ModelError(errorMessage(error), id);
  }
}

/**
 * Parses BPMN 2.0 XML into a validated {@link ProcessModel}: exactly one
 * executable process (`isExecutable="true"`; others are ignored) made only of
 * none start/end events, service and send tasks (`inbox:async`), message
 * catch events and receive tasks (`inbox:correlationKey`), timer catch events,
 * timer boundary events (parse-timer.ts), exclusive and event-based gateways
 * and sequence flows; documentation, lanes, annotations and diagram data are
 * ignored. Moddle warnings, such as a misspelt `inbox:` attribute, are errors.
 * `version` is the first 16 hex digits of the SHA-256 of `xml`.
 *
 * @throws ModelError naming the offending element id and the problem.
 */
export async function parseProcessModel(xml: string): Promise<ProcessModel> {
  const process = singleExecutableProcess(await readDefinitions(xml));
  const key = idOf(process);
  const drafts = new Map<string, Draft>();
  const flowElements: Element[] = [];
  // The process's nodes, and those of its subprocesses, each with the subprocess it is drawn in as `scope`.
  const read = (container: Element, scope: string | null, triggered: boolean): void => {
    for (const element of elements(container, 'flowElements')) {
      if (element.$type === 'bpmn:SequenceFlow') flowElements.push(element);
      if (element.$type === 'bpmn:SequenceFlow' || DIAGRAM_ONLY.has(element.$type)) continue;
      // An event subprocess's start event: its trigger is the subprocess's (eventTrigger); inside, the token starts there.
      const node: NodeDraft =
        triggered && element.$type === 'bpmn:StartEvent'
          ? { kind: 'startEvent', id: idOf(element), name: text(element, 'name') }
          : toNode(element);
      drafts.set(node.id, { ...node, ...(scope === null ? {} : { scope }), incoming: [], outgoing: [] });
      if (node.kind === 'subProcess' || node.kind === 'eventSubProcess')
        read(element, node.id, node.kind === 'eventSubProcess');
    }
  };
  read(process, null, false);
  const flows = new Map<string, SequenceFlow>();
  for (const element of flowElements) {
    const flow = toFlow(element, drafts);
    flows.set(flow.id, flow);
    drafts.get(flow.sourceId)?.outgoing.push(flow.id);
    drafts.get(flow.targetId)?.incoming.push(flow.id);
  }
  attachBoundaryEvents(drafts);
  const startEventId = checkGraph(key, drafts, flows);
  return {
    key,
    name: text(process, 'name'),
    version: sha256Hex(xml).slice(0, 16),
    startEventId,
    messageStartEvents: messageStartsOf(drafts),
    // fromEntries defines own properties: no id is ever assigned through a prototype setter.
    nodes: Object.fromEntries(drafts),
    flows: Object.fromEntries(flows),
  };
}
