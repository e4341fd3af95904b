/**
 * Reading bpmn-moddle's elements: the small accessors every part of the
 * parser shares (parse-model.ts, parse-elements.ts, parse-timer.ts), and the
 * message a wait, a boundary event or an event subprocess names.
 */
import type BpmnModdle from 'bpmn-moddle';
import { ModelError } from './model';

export type Element = BpmnModdle.ModdleElement;

/** Correlation keys name a top-level process variable. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isElement(value: unknown): value is Element {
  return typeof value === 'object' && value !== null && typeof (value as { $type?: unknown }).$type === 'string';
}

export function elements(owner: Element, property: string): Element[] {
  const value = owner[property];
  return Array.isArray(value) ? value.filter(isElement) : [];
}

export function text(owner: Element, property: string): string | null {
  const value = owner[property];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `bpmn:ServiceTask` → `serviceTask`, the spelling of the XML. */
export function xmlName(element: Element): string {
  const local = element.$type.slice(element.$type.indexOf(':') + 1);
  return local.charAt(0).toLowerCase() + local.slice(1);
}

/**
 * What is wrong with an id, or a reference to one, written with spaces
 * around it (`id=" s "`), and what to write instead (`id="s"`). Refused,
 * not trimmed: bpmn-moddle, and so bpmn-js (Camunda Modeler, the console's
 * diagram), reads an id as written and drops an element whose id is not an
 * XML name, so a trimmed model would run what those tools neither show nor
 * save (docs/bpmn-coverage.md).
 */
export function spacedIdProblem(attribute: string, written: string): string {
  return `${attribute} ${JSON.stringify(written)} has spaces around it: an id is read as written, and the modeller and the console's diagram (bpmn-js) cannot read this one; write ${attribute}="${written.trim()}"`;
}

/**
 * An element's id, or the refusal: what the engine names (a flow node, by
 * its tokens, jobs, incidents and repairs; the process, by its key) needs
 * its own. A sequence flow without one gets a derived id instead
 * (parse-flow.ts).
 */
export function idOf(element: Element): string {
  const id = text(element, 'id');
  if (id === null) {
    const name = xmlName(element);
    throw new ModelError(
      `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name} has no id: every element but a sequence flow needs one (tokens, jobs, incidents and repairs name it)`,
    );
  }
  return id;
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

export function drawingOnly(element: Element | undefined): boolean {
  if (element === undefined) return false;
  return DRAWING_TYPES.has(element.$type) || /^(bpmndi|di|dc):/.test(element.$type);
}
