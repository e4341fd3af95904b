/**
 * Loads a BPMN 2.0 file into the engine's {@link ProcessModel}. Reading is
 * bpmn-moddle's job; this module decides what the engine supports and turns
 * everything else into a {@link ModelError} at load time, so that a model
 * either runs as drawn or does not load at all.
 */
import BpmnModdle from 'bpmn-moddle';
import { sha256Hex } from '../core/hash';
import { ModelError, type MessageWaitNode, type ProcessModel, type SequenceFlow } from './model';
import { parseCondition } from './condition';
import { checkGraph } from './check-graph';
import type { Draft, NodeDraft } from './draft';
import { attachBoundaryEvents } from './check-events';
import { boundaryTimer, eventBasedGateway, timerCatchEvent } from './parse-timer';
import inboxDescriptor from './inbox-moddle.json';
import { errorMessage } from '../core/errors';

type Element = BpmnModdle.ModdleElement;

const SUPPORTED =
  'supported are: startEvent (none or message), endEvent (none or terminate), serviceTask, sendTask, businessRuleTask, ' +
  'userTask, receiveTask, task, manualTask, intermediateThrowEvent (none), ' +
  'intermediateCatchEvent (one messageEventDefinition or timerEventDefinition), boundaryEvent (one timerEventDefinition), ' +
  'exclusiveGateway, inclusiveGateway (a fork), parallelGateway, eventBasedGateway, sequenceFlow ' +
  '(docs/bpmn-coverage.md)';
/** Elements of a process that only a diagram or a reader uses: ignored on purpose, never a reason to refuse. */
const DIAGRAM_ONLY: ReadonlySet<string> = new Set([
  'bpmn:DataObject',
  'bpmn:DataObjectReference',
  'bpmn:DataStoreReference',
]);
/** Our attributes by local name: seen outside our namespace, they are a namespace mistake, not foreign data. */
const OWN_ATTRIBUTES: ReadonlySet<string> = new Set(['async', 'correlationKey']);
/** Correlation keys name a top-level process variable. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function isElement(value: unknown): value is Element {
  return typeof value === 'object' && value !== null && typeof (value as { $type?: unknown }).$type === 'string';
}

function elements(owner: Element, property: string): Element[] {
  const value = owner[property];
  return Array.isArray(value) ? value.filter(isElement) : [];
}

function text(owner: Element, property: string): string | null {
  const value = owner[property];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `bpmn:ServiceTask` → `serviceTask`, the spelling of the XML. */
function xmlName(element: Element): string {
  const local = element.$type.slice(element.$type.indexOf(':') + 1);
  return local.charAt(0).toLowerCase() + local.slice(1);
}

function idOf(element: Element): string {
  const id = text(element, 'id');
  if (id === null) throw new ModelError(`a ${xmlName(element)} has no id; every element needs one`);
  return id;
}

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

/**
 * Elements only the picture or a reader uses: the diagram (BPMN DI), data
 * objects and stores and their associations, annotations, groups, lanes,
 * collaborations and their message flows, interfaces and item definitions.
 * A warning about one (a shape that names a deleted element, a data
 * object's unresolved item) changes nothing the engine runs, so it is
 * ignored; on anything else it refuses the model.
 */
const DRAWING_TYPES: ReadonlySet<string> = new Set([
  'bpmn:DataObject',
  'bpmn:DataObjectReference',
  'bpmn:DataStoreReference',
  'bpmn:DataStore',
  'bpmn:DataInputAssociation',
  'bpmn:DataOutputAssociation',
  'bpmn:DataInput',
  'bpmn:DataOutput',
  'bpmn:InputSet',
  'bpmn:OutputSet',
  'bpmn:IoSpecification',
  'bpmn:Association',
  'bpmn:TextAnnotation',
  'bpmn:Group',
  'bpmn:Category',
  'bpmn:CategoryValue',
  'bpmn:Lane',
  'bpmn:LaneSet',
  'bpmn:Collaboration',
  'bpmn:Participant',
  'bpmn:MessageFlow',
  'bpmn:Interface',
  'bpmn:Operation',
  'bpmn:ItemDefinition',
]);

function drawingOnly(element: Element | undefined): boolean {
  if (element === undefined) return false;
  return DRAWING_TYPES.has(element.$type) || /^(bpmndi|di|dc):/.test(element.$type);
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

function messageWait(
  element: Element,
  kind: MessageWaitNode['kind'],
  messageRef: unknown,
): Omit<MessageWaitNode, 'incoming' | 'outgoing'> {
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
    throw new ModelError(
      "missing inbox:correlationKey: name the process variable the message's correlation key must equal",
      id,
    );
  }
  if (!VARIABLE_NAME.test(correlationVariable)) {
    throw new ModelError(
      `inbox:correlationKey "${correlationVariable}" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)`,
      id,
    );
  }
  return { kind, id, name: text(element, 'name'), messageName, correlationVariable, boundaryEventIds: [] };
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

/** A user task: who may do it and its form, stored as written (`inbox:assignee`, `inbox:candidateGroups`, `inbox:formKey`). */
function userTask(element: Element, id: string, name: string | null): NodeDraft {
  const groups = text(element, 'candidateGroups');
  return {
    kind: 'userTask',
    id,
    name,
    assignee: text(element, 'assignee'),
    candidateGroups: groups === null ? [] : groups.split(',').flatMap((g) => (g.trim() === '' ? [] : [g.trim()])),
    formKey: text(element, 'formKey'),
    boundaryEventIds: [],
  };
}

/** The errorCode of an errorEventDefinition's errorRef; null without errorRef (a boundary event that catches every code). */
function errorCodeOf(definition: Element, id: string): string | null {
  const ref = definition.errorRef;
  if (ref === undefined) return null;
  if (!isElement(ref) || ref.$type !== 'bpmn:Error')
    throw new ModelError('errorRef names no bpmn:error: refer to one with an errorCode', id);
  const code = text(ref, 'errorCode');
  if (code === null)
    throw new ModelError(`bpmn:error ${idOf(ref)} has no errorCode: errors are thrown and caught by their code`, id);
  return code;
}

/** An error boundary event: always interrupting; catches its errorRef's code, or every code without errorRef. */
function boundaryError(element: Element, definition: Element, id: string, name: string | null): NodeDraft {
  const attached = element.attachedToRef;
  const attachedToId = isElement(attached) ? text(attached, 'id') : null;
  if (attachedToId === null) throw new ModelError('a boundary event without attachedToRef: name the task it is on', id);
  if (element.cancelActivity === false)
    throw new ModelError(
      'a non-interrupting error boundary event: an error always ends the activity that threw it',
      id,
    );
  return { kind: 'boundaryError', id, name, attachedToId, errorCode: errorCodeOf(definition, id) };
}

/** An embedded subprocess with exactly one none start event inside; an event subprocess or a transaction is refused. */
function subProcess(element: Element, id: string, name: string | null): NodeDraft {
  if (element.triggeredByEvent === true)
    throw new ModelError(
      'an event subprocess is not supported yet: catch errors with an error boundary event on the subprocess or task, and timers with a timer boundary event',
      id,
    );
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
  const definitions = elements(element, 'eventDefinitions');
  if (element.loopCharacteristics !== undefined)
    throw unsupported(element, `${xmlName(element)} with loop or multi-instance characteristics`);
  const name = text(element, 'name');
  switch (element.$type) {
    case 'bpmn:StartEvent':
      return startEvent(element, id, name, definitions);
    case 'bpmn:EndEvent': {
      const [definition, second] = definitions;
      if (definition === undefined) return { kind: 'endEvent', id, name, terminate: false };
      if (definition.$type === 'bpmn:TerminateEventDefinition' && second === undefined)
        return { kind: 'endEvent', id, name, terminate: true };
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
    case 'bpmn:ServiceTask':
    case 'bpmn:SendTask':
    case 'bpmn:BusinessRuleTask':
      return { kind: TASK_KINDS[element.$type], id, name, async: asyncFlag(element, id), boundaryEventIds: [] };
    case 'bpmn:Task':
    case 'bpmn:ManualTask':
      return { kind: 'passThrough', element: element.$type === 'bpmn:Task' ? 'task' : 'manualTask', id, name };
    case 'bpmn:IntermediateThrowEvent':
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
      return boundaryTimer(element, definitions, id, name);
    case 'bpmn:SubProcess':
      return subProcess(element, id, name);
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
  const read = (container: Element, scope: string | null): void => {
    for (const element of elements(container, 'flowElements')) {
      if (element.$type === 'bpmn:SequenceFlow') flowElements.push(element);
      if (element.$type === 'bpmn:SequenceFlow' || DIAGRAM_ONLY.has(element.$type)) continue;
      const node = toNode(element);
      drafts.set(node.id, { ...node, ...(scope === null ? {} : { scope }), incoming: [], outgoing: [] });
      if (node.kind === 'subProcess') read(element, node.id);
    }
  };
  read(process, null);
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
