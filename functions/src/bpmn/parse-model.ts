/**
 * Loads a BPMN 2.0 file into the engine's {@link ProcessModel}. Reading is
 * bpmn-moddle's job; this module decides what the engine supports and turns
 * everything else into a {@link ModelError} at load time, so that a model
 * either runs as drawn or does not load at all.
 */
import BpmnModdle from 'bpmn-moddle';
import { sha256Hex } from '../core/hash';
import { ModelError, OUTPUTS_AS_PASSED, type ProcessModel, type SequenceFlow } from './model';
import { sequenceFlows } from './parse-flow';
import { checkGraph } from './check-graph';
import type { Draft, NodeDraft } from './draft';
import { attachBoundaryEvents } from './check-events';
import { boundaryTimer, eventBasedGateway, timerCatchEvent } from './parse-timer';
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
  messageWait,
} from './parse-elements';
import { drawingOnly, type Element, elements, idOf, isElement, spacedIdProblem, text, xmlName } from './read';
import inboxDescriptor from './inbox-moddle.json';
import zeebeDescriptor from 'zeebe-bpmn-moddle/resources/zeebe.json';
import { asyncByVendor, checkExtensions, engineOf, namespacesOf } from './check-extensions';
import { checkDocument } from './check-document';
import { extension, ioMappingOf, jobDefinitionOf, propertiesOf } from './zeebe';
import { errorMessage } from '../core/errors';
import { loopOf } from './parse-loop';
import { startEvent } from './parse-start';

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
const refuse = (error: ModelError): never => {
  throw error;
};
function unsupported(element: Element, what = xmlName(element)): ModelError {
  return new ModelError(`unsupported element ${what}; ${SUPPORTED}`, idOf(element));
}

/** What bpmn-moddle reads as an id (moddle-xml's own test): an XML name, ASCII only, an optional prefix. */
const XML_ID = /^([a-z][\w-.]*:)?[a-z_][\w-.]*$/i;

/** Moddle reports what it skipped as warnings; a skipped attribute would silently change behaviour, so each is fatal. */
function warningToError(warning: BpmnModdle.ImportWarning): ModelError {
  // An event definition is drawn as its event; name the event, which is what the modeller sees.
  const parent = warning.element?.$parent;
  const element =
    warning.element?.$type.endsWith('EventDefinition') === true && isElement(parent) ? parent : warning.element;
  const elementId = element === undefined ? null : text(element, 'id');
  const value = typeof warning.value === 'string' ? warning.value : '';
  const illegal = /^illegal ID <([\s\S]*)>$/.exec(warning.error?.message ?? '')?.[1];
  if (illegal !== undefined) {
    // The element is dropped, so the warning names no element: the tag and the id as written say which.
    const tag = /^unparsable content <([^\s>]+)>/.exec(warning.message)?.[1] ?? 'an element';
    return new ModelError(
      illegal !== illegal.trim() && XML_ID.test(illegal.trim())
        ? `${tag} ${spacedIdProblem('id', illegal)}`
        : `${tag} id ${JSON.stringify(illegal)} is not an XML name: an id holds letters, digits, _, - and ., and starts with a letter or _`,
    );
  }
  if (warning.message.startsWith('unresolved reference') && value !== value.trim() && warning.property !== undefined)
    return new ModelError(spacedIdProblem(warning.property.replace(/^bpmn:/, ''), value), elementId);
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
  checkDocument(xml);
  let result: BpmnModdle.ParseResult;
  try {
    result = await new BpmnModdle({ inbox: inboxDescriptor, zeebe: zeebeDescriptor }).fromXML(xml);
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

/** What every element is read with: the document's namespaces, and whether it is a Camunda 8 model. */
interface Context {
  readonly namespaces: ReadonlyMap<string, string>;
  readonly camunda8: boolean;
}

/** One flow node without its flows, or an error for anything the engine cannot run. */
function toNode(element: Element, context: Context): NodeDraft {
  const id = idOf(element);
  for (const attribute of Object.keys(element.$attrs ?? {})) {
    // Another engine's `async` is its own flag (check-extensions.ts), not a misspelt inbox:async.
    if (
      OWN_ATTRIBUTES.has(attribute.slice(attribute.indexOf(':') + 1)) &&
      engineOf(attribute, context.namespaces) === null
    ) {
      throw new ModelError(
        `attribute ${attribute} is not in the inbox namespace; declare xmlns:inbox="${inboxDescriptor.uri}"`,
        id,
      );
    }
  }
  const loop = loopOf(element, id);
  const node = withZeebe(element, plainNode(element, id, context), id);
  if (element.correlationKey !== undefined && !KEYED.has(node.kind))
    throw new ModelError(
      `inbox:correlationKey on a ${xmlName(element)}: only a message event or receive task waits for a key`,
      id,
    );
  return loop === undefined ? node : { ...node, loop };
}

/** The nodes inbox:correlationKey means something on. */
const KEYED: ReadonlySet<string> = new Set([
  'messageCatchEvent',
  'receiveTask',
  'messageStartEvent',
  'boundaryMessage',
]);

/** Where `zeebe:ioMapping` is run besides a job (its handler): a user task (its completion) and message throws (their job). */
const MAPPED: ReadonlySet<string> = new Set(['userTask', 'messageThrowEvent', 'messageEndEvent', 'callActivity']);
/** Where only outputs are run: a message wait (over its message), and events a token passes (over the variables). */
const OUTPUTS_ONLY: ReadonlySet<string> = new Set(['messageCatchEvent', 'receiveTask', ...OUTPUTS_AS_PASSED]);

/**
 * The zeebe elements that mean something only on some elements: drawn
 * elsewhere (a task definition on a user task, a called element on a
 * service task, a subscription outside its message), nothing would read
 * them, so the model is refused rather than run without them.
 */
function checkPlacement(element: Element, node: NodeDraft, id: string): void {
  const hasJob = 'job' in node;
  const placed: readonly [string, boolean][] = [
    ['zeebe:TaskDefinition', hasJob],
    ['zeebe:TaskHeaders', hasJob],
    ['zeebe:CalledElement', node.kind === 'callActivity'],
    ['zeebe:UserTask', node.kind === 'userTask'],
    ['zeebe:AssignmentDefinition', node.kind === 'userTask'],
    // A start event's form is a start form: kept by the modeller, never read by an engine that starts by messages.
    ['zeebe:FormDefinition', node.kind === 'userTask' || element.$type === 'bpmn:StartEvent'],
    ['zeebe:Subscription', false],
  ];
  for (const [type, ok] of placed)
    if (!ok && extension(element, type) !== undefined)
      throw new ModelError(
        `zeebe:${type.charAt(6).toLowerCase()}${type.slice(7)} on a ${xmlName(element)} is not read there: ${
          type === 'zeebe:Subscription'
            ? 'put it in the bpmn:message'
            : 'remove it, or move it to an element that runs it'
        }`,
        id,
      );
}

/** A node with its `zeebe:ioMapping` and `zeebe:properties`, where the engine runs them; the refusal elsewhere. */
function withZeebe(element: Element, node: NodeDraft, id: string): NodeDraft {
  checkPlacement(element, node, id);
  const io = ioMappingOf(element, id);
  const properties = propertiesOf(element);
  const extras = { ...(io === undefined ? {} : { io }), ...(properties === undefined ? {} : { properties }) };
  if (io === undefined) return { ...node, ...extras };
  const isJob = 'async' in node && node.async;
  if (!isJob && !MAPPED.has(node.kind) && !OUTPUTS_ONLY.has(node.kind))
    throw new ModelError(
      `zeebe:ioMapping on a ${xmlName(element)} is not run here: map in a task with a handler before or after it`,
      id,
    );
  if (io.inputs.length > 0 && OUTPUTS_ONLY.has(node.kind))
    throw new ModelError(`zeebe:input on a ${xmlName(element)}: nothing runs there to see it; map outputs only`, id);
  if (node.loop !== undefined || element.loopCharacteristics !== undefined)
    throw new ModelError(
      'zeebe:ioMapping on a multi-instance activity is not run: map in the items, or before and after',
      id,
    );
  return { ...node, ...extras };
}

/** One flow node without its flows and its multi-instance characteristics. */
function plainNode(element: Element, id: string, context: Context): NodeDraft {
  const definitions = elements(element, 'eventDefinitions');
  const name = text(element, 'name');
  switch (element.$type) {
    case 'bpmn:StartEvent':
      return (
        startEvent(element, id, name, definitions, context.camunda8) ??
        refuse(unsupported(element, `startEvent with ${definitions.map(xmlName).join(' and ')}`))
      );
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
      if (element.messageRef !== undefined) {
        const { messageName, ...sent } = sentMessage(element, 'sendTask');
        return { ...sent, ...(messageName === null ? {} : { messageName }), async: true, boundaryEventIds: [] };
      }
      return task(element, 'bpmn:SendTask', id, name, context);
    case 'bpmn:ServiceTask':
    case 'bpmn:BusinessRuleTask':
      return task(element, element.$type, id, name, context);
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
 * A service, send or business rule task: async with `inbox:async="true"`, a
 * `zeebe:taskDefinition` (its handler found by type) or another engine's
 * async flag (check-extensions.ts); otherwise a synchronous task.
 */
function task(
  element: Element,
  type: keyof typeof TASK_KINDS,
  id: string,
  name: string | null,
  context: Context,
): NodeDraft {
  const job = jobDefinitionOf(element, id);
  const flag = asyncFlag(element, id);
  if (job !== undefined && element.async === 'false')
    throw new ModelError(
      'inbox:async="false" with a zeebe:taskDefinition: a task run by a worker is async; drop one',
      id,
    );
  const async = flag || job !== undefined || asyncByVendor(element, context.namespaces);
  return { kind: TASK_KINDS[type], id, name, async, ...(job === undefined ? {} : { job }), boundaryEventIds: [] };
}

/** The message start events by message name (checkGraph refuses two for one name, so each name is one node). */
function messageStartsOf(drafts: ReadonlyMap<string, Draft>): Record<string, string> {
  const starts = [...drafts.values()].flatMap((n) =>
    n.kind === 'messageStartEvent' ? [[n.messageName, n.id] as const] : [],
  );
  // fromEntries: a message named `__proto__` is an own key like any other.
  return Object.fromEntries(starts);
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
  const definitions = await readDefinitions(xml);
  const process = singleExecutableProcess(definitions);
  const namespaces = namespacesOf(definitions);
  const context: Context = { namespaces, camunda8: [...namespaces.values()].includes(zeebeDescriptor.uri) };
  const used = elements(definitions, 'rootElements').filter((e) =>
    ['bpmn:Message', 'bpmn:Error', 'bpmn:Escalation'].includes(e.$type),
  );
  checkExtensions([process, ...used], namespaces);
  const key = idOf(process);
  const drafts = new Map<string, Draft>();
  const flowElements: Element[] = [];
  // The process's nodes, and those of its subprocesses, each with the subprocess it is drawn in as `scope`.
  const read = (container: Element, scope: string | null, triggered: boolean): void => {
    for (const element of elements(container, 'flowElements')) {
      if (element.$type === 'bpmn:SequenceFlow') flowElements.push(element);
      if (element.$type === 'bpmn:SequenceFlow' || DIAGRAM_ONLY.has(element.$type)) continue;
      // An event subprocess's start event: its trigger is the subprocess's (eventTrigger); inside, the token starts there.
      if (triggered && element.$type === 'bpmn:StartEvent' && ioMappingOf(element, idOf(element)) !== undefined)
        throw new ModelError(
          'zeebe:ioMapping on the start event of an event subprocess is not run: map in a task after it',
          idOf(element),
        );
      const node: NodeDraft =
        triggered && element.$type === 'bpmn:StartEvent'
          ? { kind: 'startEvent', id: idOf(element), name: text(element, 'name') }
          : toNode(element, context);
      drafts.set(node.id, { ...node, ...(scope === null ? {} : { scope }), incoming: [], outgoing: [] });
      if (node.kind === 'subProcess' || node.kind === 'eventSubProcess')
        read(element, node.id, node.kind === 'eventSubProcess');
    }
  };
  read(process, null, false);
  const flows = new Map<string, SequenceFlow>();
  for (const flow of sequenceFlows(flowElements, drafts)) {
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
