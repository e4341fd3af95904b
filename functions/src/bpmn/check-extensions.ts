/**
 * No extension silently ignored. Models drawn for Camunda 7, Flowable,
 * Activiti or jBPM carry their engine's attributes and extension elements
 * (`camunda:class`, `flowable:assignee`, `<camunda:inputOutput>`), and a
 * Camunda 8 model zeebe elements this engine does not run
 * (`zeebe:calledDecision`, `zeebe:executionListeners`). Each one that
 * changes how the model runs refuses the model, in one line naming the
 * element, the attribute or element as written, and what to write instead.
 * What changes nothing the engine runs (modeller metadata, history
 * settings, colours, properties) is ignored on purpose; the lists below are
 * the whole of it, and docs/camunda-models.md repeats them.
 *
 * The one translation: Camunda 7's `asyncBefore` / `async` and Flowable's
 * and Activiti's `async` mean "run this step on its own, after a commit",
 * which is what an async step is: on a service, send or business rule task
 * they make it one (parse-model.ts asks {@link asyncByVendor}); on any other
 * element they mark a save point, and every wait of this engine is one.
 */
import { ModelError } from './model';
import { type Element, isElement, text, xmlName } from './read';

/** The engines whose namespaces are checked, by namespace URI. */
const ENGINES: ReadonlyMap<string, string> = new Map([
  ['http://camunda.org/schema/1.0/bpmn', 'Camunda 7'],
  ['http://camunda.org/schema/1.0/dmn', 'Camunda 7'],
  ['http://flowable.org/bpmn', 'Flowable'],
  ['http://activiti.org/bpmn', 'Activiti'],
  ['http://www.jboss.org/drools', 'jBPM'],
]);

/** Attributes of those engines that change nothing this engine runs, by local name. */
const IGNORED_ATTRIBUTES: ReadonlySet<string> = new Set([
  // Modeller and history metadata.
  'modelerTemplate',
  'modelerTemplateVersion',
  'modelerTemplateIcon',
  'diagramRelationId',
  'versionTag',
  'historyTimeToLive',
  'isStartableInTasklist',
  // Who may start the process in that engine's task list: the app's own door decides here.
  'candidateStarterGroups',
  'candidateStarterUsers',
  // Job scheduling hints: the jobs of one instance are serialised by its transaction anyway.
  'exclusive',
  'jobPriority',
  'taskPriority',
  'priority',
  // Shown by a task list, never read by an engine.
  'dueDate',
  'followUpDate',
]);

/** The async flags, by local name: an async step on a task, a save point elsewhere. */
const ASYNC_ATTRIBUTES: ReadonlySet<string> = new Set(['asyncBefore', 'async']);

/** Extension elements of those engines that change nothing this engine runs, by local name. */
const IGNORED_ELEMENTS: ReadonlySet<string> = new Set(['properties', 'property', 'formData', 'formField']);

/** Zeebe extension elements this engine reads (bpmn/zeebe.ts) or keeps as data, by moddle type. */
const ZEEBE_READ: ReadonlySet<string> = new Set([
  'zeebe:TaskDefinition',
  'zeebe:IoMapping',
  'zeebe:Input',
  'zeebe:Output',
  'zeebe:Subscription',
  'zeebe:CalledElement',
  'zeebe:UserTask',
  'zeebe:AssignmentDefinition',
  'zeebe:FormDefinition',
  'zeebe:Properties',
  'zeebe:Property',
  'zeebe:TaskHeaders',
  'zeebe:Header',
  'zeebe:LoopCharacteristics',
  // Metadata: a version label, a form's content, priorities and dates a task list shows.
  'zeebe:VersionTag',
  'zeebe:UserTaskForm',
  'zeebe:PriorityDefinition',
  'zeebe:JobPriorityDefinition',
  'zeebe:TaskSchedule',
]);

/** What to write instead, by local name (Camunda 7, Flowable, Activiti share most names). */
const INSTEAD: Readonly<Record<string, string>> = {
  class: 'give the task a zeebe:taskDefinition type (or inbox:async="true") and register its handler',
  delegateExpression: 'give the task a zeebe:taskDefinition type (or inbox:async="true") and register its handler',
  expression: 'give the task a zeebe:taskDefinition type (or inbox:async="true") and register its handler',
  type: 'give the task a zeebe:taskDefinition type and register its handler',
  topic: 'give the task a zeebe:taskDefinition type and register its handler',
  resultVariable: "return the result from the task's handler",
  asyncAfter: 'mark the next step async instead (a wait is a save point)',
  assignee: 'use zeebe:assignmentDefinition assignee or inbox:assignee',
  candidateUsers: 'use zeebe:assignmentDefinition candidateUsers',
  candidateGroups: 'use zeebe:assignmentDefinition candidateGroups or inbox:candidateGroups',
  formKey: 'use zeebe:formDefinition or inbox:formKey',
  collection: 'use zeebe:loopCharacteristics inputCollection or inbox:collection',
  elementVariable: 'use zeebe:loopCharacteristics inputElement or inbox:elementVariable',
  calledElementBinding: 'calls always start the latest deployed model of the process',
  calledElementVersion: 'calls always start the latest deployed model of the process',
  inputOutput: 'use zeebe:ioMapping',
  in: 'remove it: a called process gets all variables of the caller',
  out: 'remove it: all variables of the called process come back',
  failedJobRetryTimeCycle: 'use zeebe:taskDefinition retries',
  executionListener: 'do the work in a task with a handler',
  taskListener: 'do the work in a task with a handler',
  calledDecision: 'decide in a task with a zeebe:taskDefinition type and its handler',
  decisionRef: 'decide in a task with a zeebe:taskDefinition type and its handler',
  script: 'make it a task with a zeebe:taskDefinition type and its handler',
  executionListeners: 'do the work in a task with a handler',
  taskListeners: 'do the work in a task with a handler',
  linkedResources: 'read the resource in the task handler',
  adHoc: 'draw the activities as a subprocess the engine can run',
  conditionalFilter: 'this engine has no conditional events: wait for a message instead',
};

const DEFAULT_INSTEAD = 'remove it, or do its work in a task with a handler';

/** The namespace URIs declared on the document, by prefix. */
export function namespacesOf(definitions: Element): ReadonlyMap<string, string> {
  const declared = new Map<string, string>();
  for (const [name, uri] of Object.entries(definitions.$attrs ?? {}))
    if (name.startsWith('xmlns:') && typeof uri === 'string') declared.set(name.slice(6), uri);
  return declared;
}

/** The engine a prefixed name belongs to (`camunda:class` → Camunda 7), or null. */
export function engineOf(name: string, namespaces: ReadonlyMap<string, string>): string | null {
  const colon = name.indexOf(':');
  if (colon < 0) return null;
  const uri = namespaces.get(name.slice(0, colon));
  return uri === undefined ? null : (ENGINES.get(uri) ?? null);
}

const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

function refuse(owner: Element, what: string, engine: string, local: string): never {
  const id = ownerId(owner);
  throw new ModelError(`${what} (${engine}) is not run by this engine: ${INSTEAD[local] ?? DEFAULT_INSTEAD}`, id);
}

/** The id of the nearest element that has one: an event definition or a mapping is named by its flow element. */
function ownerId(element: Element): string | null {
  for (let at: unknown = element; isElement(at); at = at.$parent) {
    const id = text(at, 'id');
    if (id !== null && !at.$type.startsWith('zeebe:')) return id;
  }
  return null;
}

function checkAttributes(element: Element, namespaces: ReadonlyMap<string, string>): void {
  for (const name of Object.keys(element.$attrs ?? {})) {
    const engine = engineOf(name, namespaces);
    if (engine === null) continue;
    const local = localName(name);
    if (IGNORED_ATTRIBUTES.has(local) || ASYNC_ATTRIBUTES.has(local)) continue;
    refuse(element, `attribute ${name} on ${xmlName(element)}`, engine, local);
  }
}

function checkExtensionElement(child: Element, namespaces: ReadonlyMap<string, string>): void {
  if (child.$type.startsWith('zeebe:')) {
    if (!ZEEBE_READ.has(child.$type)) refuse(child, `zeebe:${xmlName(child)}`, 'Camunda 8', xmlName(child));
    return;
  }
  const engine = engineOf(child.$type, namespaces);
  if (engine === null) return;
  const local = localName(child.$type);
  if (!IGNORED_ELEMENTS.has(local)) refuse(child, `extension element ${child.$type}`, engine, local);
}

/** The elements `owner` contains (not those it refers to: a reference's `$parent` is another element). */
function children(owner: Element): Element[] {
  const found: Element[] = [];
  for (const [key, value] of Object.entries(owner)) {
    if (key === '$parent' || key === '$attrs' || key === '$type') continue;
    const values: unknown[] = Array.isArray(value) ? value : [value];
    for (const v of values) if (isElement(v) && (v.$parent === owner || key === '$children')) found.push(v);
  }
  return found;
}

/**
 * Refuses the process (or a message, error or escalation it uses) when an
 * element carries an attribute or extension element of another engine, or a
 * zeebe element this engine does not run. Throws the first one found.
 */
export function checkExtensions(roots: readonly Element[], namespaces: ReadonlyMap<string, string>): void {
  const seen = new Set<Element>();
  const visit = (element: Element): void => {
    if (seen.has(element)) return;
    seen.add(element);
    checkAttributes(element, namespaces);
    if (element.$type === 'bpmn:ExtensionElements')
      for (const child of children(element)) checkExtensionElement(child, namespaces);
    for (const child of children(element)) visit(child);
  };
  for (const root of roots) visit(root);
}

/**
 * Whether an element carries another engine's async flag set to true
 * (`camunda:asyncBefore`, `camunda:async`, `flowable:async`, `activiti:async`).
 */
export function asyncByVendor(element: Element, namespaces: ReadonlyMap<string, string>): boolean {
  return Object.entries(element.$attrs ?? {}).some(
    ([name, value]) =>
      engineOf(name, namespaces) !== null && ASYNC_ATTRIBUTES.has(localName(name)) && String(value) === 'true',
  );
}
