/**
 * The Camunda Modeler element templates of docs/element-templates/inbox.json:
 * valid against the element templates JSON schema, and nothing a template
 * writes is refused by the engine. A template is applied the way the modeler
 * applies it: every `property` binding is set on the element (with
 * `camunda:modelerTemplate` and its version), and bpmn-moddle, which knows
 * no `inbox:` namespace there, writes the XML; parseProcessModel then loads
 * what was written. Nothing here repeats the templates: the attributes and
 * their sample values (a property's value, else its placeholder) are read
 * from the JSON. Needs no emulators.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import BpmnModdle from 'bpmn-moddle';
import inboxDescriptor from '../../functions/src/bpmn/inbox-moddle.json';
import { ModelError } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { type Element, elements, VARIABLE_NAME } from '../../functions/src/bpmn/read';
import { chain, element } from '../support/bpmn-xml';

interface Constraints {
  notEmpty?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string | { value: string; message?: string };
}
interface TemplateProperty {
  type?: string;
  value?: string | number | boolean;
  placeholder?: string;
  group?: string;
  binding: { type: string; name?: string };
  constraints?: Constraints;
}
interface Template {
  id: string;
  name: string;
  version?: number;
  appliesTo: string[];
  groups?: Array<{ id: string; label: string }>;
  properties: TemplateProperty[];
}

const FILE = join(__dirname, '..', '..', 'docs', 'element-templates', 'inbox.json');
const TEMPLATES = JSON.parse(readFileSync(FILE, 'utf8')) as Template[];
const SCHEMA = JSON.parse(
  readFileSync(require.resolve('@camunda/element-templates-json-schema/resources/schema.json'), 'utf8'),
) as object;
const NAMESPACE_ATTRIBUTE = `xmlns:${inboxDescriptor.prefix}`;

/** The writing half of bpmn-moddle, which the engine never uses (functions/src/bpmn/bpmn-moddle.d.ts types the reading half). */
interface ModdleWriter {
  toXML(definitions: Element): Promise<{ xml: string }>;
}
type Settable = Element & { set(name: string, value: unknown): void };

/**
 * A diagram as Camunda Modeler starts a Camunda 7 one: the camunda and modeler
 * namespaces declared, the inbox namespace not; message `m` named Done.
 */
function modelerDocument(process: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    xmlns:modeler="http://camunda.org/schema/modeler/1.0" id="d" targetNamespace="http://bpmn.io/schema/bpmn"
    modeler:executionPlatform="Camunda Platform" modeler:executionPlatformVersion="7.23.0">
  <bpmn:message id="m" name="Done" />
  <bpmn:process id="p" isExecutable="true">${process}</bpmn:process>
</bpmn:definitions>`;
}

const MESSAGE = '<bpmn:messageEventDefinition messageRef="m" />';
/** start → `target` → end, around the element drawn as `target`. */
const between = (target: string): string =>
  element('startEvent', 'start') + target + element('endEvent', 'end') + chain('start', 'target', 'end');

/**
 * What the modeller draws before applying a template, by the element type the
 * template applies to: an element `target` in a process that loads once the
 * template's attributes are on it (a template cannot draw an event definition
 * or pick a message; the modeller does, in the modeler's own fields).
 */
const DRAWINGS: Readonly<Record<string, string>> = {
  'bpmn:ServiceTask': between(element('serviceTask', 'target')),
  'bpmn:SendTask': between(element('sendTask', 'target')),
  'bpmn:BusinessRuleTask': between(element('businessRuleTask', 'target')),
  'bpmn:UserTask': between(element('userTask', 'target')),
  'bpmn:ReceiveTask': between(element('receiveTask', 'target', 'messageRef="m"')),
  'bpmn:IntermediateCatchEvent': between(element('intermediateCatchEvent', 'target', '', MESSAGE)),
  'bpmn:StartEvent': element('startEvent', 'target', '', MESSAGE) + element('endEvent', 'end') + chain('target', 'end'),
  'bpmn:BoundaryEvent':
    element('startEvent', 'start') +
    element('userTask', 'work') +
    element('endEvent', 'end') +
    element('boundaryEvent', 'target', 'attachedToRef="work"', MESSAGE) +
    element('endEvent', 'withdrawn') +
    chain('start', 'work', 'end') +
    chain('target', 'withdrawn'),
};

function drawingOf(type: string): string {
  const drawing = DRAWINGS[type];
  if (drawing === undefined) throw new Error(`no drawing for ${type}: add one to DRAWINGS`);
  return drawing;
}

function findElement(container: Element, id: string): Element | undefined {
  for (const child of elements(container, 'flowElements')) {
    if (child.id === id) return child;
    const inner = findElement(child, id);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

const propertyBindings = (template: Template): TemplateProperty[] =>
  template.properties.filter((p) => p.binding.type === 'property');

function bindingName(property: TemplateProperty): string {
  const name = property.binding.name;
  if (name === undefined) throw new Error('a property binding without a name');
  return name;
}

/** The value a property is tried with: its value (the template's default), else its placeholder (the example the modeller sees). */
function sampleOf(property: TemplateProperty): string {
  const sample = property.value ?? property.placeholder;
  if (sample === undefined)
    throw new Error(`${bindingName(property)}: give it a placeholder, the example value this test applies`);
  return String(sample);
}

/** Why `value` breaks the property's constraints, as the modeler's properties panel checks them. */
function constraintProblems(property: TemplateProperty, value: string): string[] {
  const { notEmpty, minLength, maxLength, pattern } = property.constraints ?? {};
  const regex = typeof pattern === 'string' ? pattern : pattern?.value;
  return [
    notEmpty === true && value === '' ? 'empty' : null,
    minLength !== undefined && value.length < minLength ? `shorter than ${minLength}` : null,
    maxLength !== undefined && value.length > maxLength ? `longer than ${maxLength}` : null,
    regex !== undefined && !new RegExp(regex).test(value) ? `not matching ${regex}` : null,
  ].filter((p): p is string => p !== null);
}

/**
 * The XML Camunda Modeler saves after applying `template` to the drawn
 * `target` of `type` (or of `drawing`) and typing `typed` (by binding name) into its fields:
 * bpmn-js-element-templates sets `camunda:modelerTemplate`, its version and
 * every property binding's value (undefined unsets); typing sets the rest.
 */
async function applied(
  template: Template,
  type: string,
  typed: Readonly<Record<string, string>>,
  drawing = drawingOf(type),
): Promise<string> {
  const moddle = new BpmnModdle() as BpmnModdle & ModdleWriter;
  const { rootElement } = await moddle.fromXML(modelerDocument(drawing));
  const process = elements(rootElement, 'rootElements').find((e) => e.$type === 'bpmn:Process');
  const target = process === undefined ? undefined : (findElement(process, 'target') as Settable | undefined);
  if (target === undefined) throw new Error(`the drawing of ${type} has no element target`);
  target.set('camunda:modelerTemplate', template.id);
  target.set('camunda:modelerTemplateVersion', template.version);
  for (const property of propertyBindings(template)) {
    const name = bindingName(property);
    target.set(name, typed[name] ?? property.value);
  }
  return (await moddle.toXML(rootElement)).xml;
}

/** Every property binding with its sample value: what a modeller who types the examples saves. */
const allSamples = (template: Template): Record<string, string> =>
  Object.fromEntries(propertyBindings(template).map((p) => [bindingName(p), sampleOf(p)]));

/** Only what must be there: the values the template sets itself and the fields that must not be empty. */
const requiredSamples = (template: Template): Record<string, string> =>
  Object.fromEntries(
    propertyBindings(template)
      .filter((p) => p.value !== undefined || p.constraints?.notEmpty === true)
      .map((p) => [bindingName(p), sampleOf(p)]),
  );

const CASES = TEMPLATES.flatMap((template) =>
  template.appliesTo.map((type) => [template.name, type, template] as const),
);

describe('docs/element-templates/inbox.json', () => {
  test('is valid against the element templates JSON schema', () => {
    // strict: false: the schema itself uses union types and untyped `properties`, which Ajv's strict mode reports.
    const validate = new Ajv({ allErrors: true, strict: false }).compile(SCHEMA);
    validate(TEMPLATES);
    expect(validate.errors ?? []).toEqual([]);
  });

  test('ids and versions are unique; every property group is declared; every inbox: template declares the namespace', () => {
    const keys = TEMPLATES.map((t) => `${t.id}@${t.version ?? '_'}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const template of TEMPLATES) {
      const groups = (template.groups ?? []).map((g) => g.id);
      const used = template.properties.flatMap((p) => (p.group === undefined ? [] : [p.group]));
      expect({ template: template.id, undeclared: used.filter((g) => !groups.includes(g)) }).toEqual({
        template: template.id,
        undeclared: [],
      });
      const names = propertyBindings(template).map(bindingName);
      if (names.some((n) => n.startsWith(`${inboxDescriptor.prefix}:`))) {
        const namespace = template.properties.find((p) => p.binding.name === NAMESPACE_ATTRIBUTE);
        expect({ template: template.id, type: namespace?.type, value: namespace?.value }).toEqual({
          template: template.id,
          type: 'Hidden',
          value: inboxDescriptor.uri,
        });
      }
    }
  });

  test("each property's sample value satisfies its own constraints", () => {
    const problems = TEMPLATES.flatMap((template) =>
      propertyBindings(template).flatMap((p) =>
        constraintProblems(p, sampleOf(p)).map((why) => `${template.id} ${bindingName(p)}: ${why}`),
      ),
    );
    expect(problems).toEqual([]);
  });

  test('every inbox: attribute of a flow node is written by a template; those of child elements cannot be bound', () => {
    // A `property` binding writes an attribute of the templated element itself. The schema
    // (@camunda/element-templates-json-schema) has no binding for a child element such as a
    // timerEventDefinition or multiInstanceLoopCharacteristics (docs/element-templates/README.md).
    const CHILD_ELEMENTS = ['bpmn:TimerEventDefinition', 'bpmn:MultiInstanceLoopCharacteristics'];
    const written = new Set(
      TEMPLATES.flatMap((t) =>
        t.appliesTo.flatMap((type) => propertyBindings(t).map((p) => `${type} ${bindingName(p)}`)),
      ),
    );
    const declared = inboxDescriptor.types.flatMap((type) =>
      type.extends.flatMap((extended) =>
        type.properties.map((p) => ({ extended, attribute: `${extended} ${inboxDescriptor.prefix}:${p.name}` })),
      ),
    );
    expect(declared.filter((d) => !CHILD_ELEMENTS.includes(d.extended) && !written.has(d.attribute))).toEqual([]);
    expect(declared.filter((d) => CHILD_ELEMENTS.includes(d.extended)).length).toBeGreaterThan(0);
  });
});

describe('applied in Camunda Modeler, each template writes a model the engine loads', () => {
  test.each(CASES)('%s on a %s, with the example values', async (_name, type, template) => {
    const samples = allSamples(template);
    const xml = await applied(template, type, samples);
    // Nothing was lost on the way out (bpmn-moddle drops an attribute of an undeclared namespace).
    for (const [name, value] of Object.entries(samples)) expect(xml).toContain(`${name}="${value}"`);
    const model = await parseProcessModel(xml);
    expect(model.nodes.target).toBeDefined();
  });

  test.each(CASES)('%s on a %s, with only the required values', async (_name, type, template) => {
    await expect(parseProcessModel(await applied(template, type, requiredSamples(template)))).resolves.toBeDefined();
  });

  const requiredCases = CASES.flatMap(([name, type, template]) =>
    propertyBindings(template)
      .filter((p) => p.value === undefined && p.constraints?.notEmpty === true)
      .map((p) => [name, type, bindingName(p), template] as const),
  );
  test.each(requiredCases)('%s on a %s, %s left empty: refused, as notEmpty says', async (_n, type, name, template) => {
    const typed = Object.fromEntries(Object.entries(requiredSamples(template)).filter(([n]) => n !== name));
    await expect(parseProcessModel(await applied(template, type, typed))).rejects.toThrow(ModelError);
  });
});

describe('what a wrong template would write, the engine refuses', () => {
  const byId = (id: string): Template => {
    const template = TEMPLATES.find((t) => t.id === id);
    if (template === undefined) throw new Error(`no template ${id}`);
    return template;
  };
  /** `template` with the binding named `from` renamed `to` (undefined: the property removed). */
  const renamed = (template: Template, from: string, to: string | undefined): Template => ({
    ...template,
    properties: template.properties.flatMap((p) =>
      p.binding.name !== from ? [p] : to === undefined ? [] : [{ ...p, binding: { ...p.binding, name: to } }],
    ),
  });

  test('a misspelt attribute name', async () => {
    const template = renamed(byId('inbox.async-step'), 'inbox:async', 'inbox:asnyc');
    const xml = await applied(template, 'bpmn:ServiceTask', allSamples(template));
    expect(xml).toContain('inbox:asnyc="true"');
    await expect(parseProcessModel(xml)).rejects.toThrow(/unknown attribute <inbox:asnyc>/);
  });

  test('an element type the attribute is not declared for (appliesTo wider than the descriptor)', async () => {
    const template = byId('inbox.async-step');
    const xml = await applied({ ...template, appliesTo: ['bpmn:UserTask'] }, 'bpmn:UserTask', allSamples(template));
    await expect(parseProcessModel(xml)).rejects.toThrow(/unknown attribute <inbox:async>/);
  });

  test('a correlation key on a timer catch event: appliesTo cannot say "message events only", the engine can', async () => {
    const template = byId('inbox.wait-for-message');
    const timer = between(
      element(
        'intermediateCatchEvent',
        'target',
        '',
        '<bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>',
      ),
    );
    const xml = await applied(template, 'bpmn:IntermediateCatchEvent', allSamples(template), timer);
    await expect(parseProcessModel(xml)).rejects.toThrow(/correlationKey on a timer catch event/);
  });

  test('a template without the namespace declaration: the modeler drops its attributes on save', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const template = renamed(byId('inbox.wait-for-message'), NAMESPACE_ATTRIBUTE, undefined);
      const xml = await applied(template, 'bpmn:IntermediateCatchEvent', allSamples(template));
      expect(xml).not.toContain('inbox:correlationKey');
      const warned = warn.mock.calls.map((args) => String(args[0]));
      expect(warned).toContain('missing namespace information for <inbox:correlationKey=orderId> on');
      await expect(parseProcessModel(xml)).rejects.toThrow(/missing inbox:correlationKey/);
    } finally {
      warn.mockRestore();
    }
  });

  test("the correlation key's pattern is the engine's variable name: a name it refuses, the engine refuses", async () => {
    const keys = TEMPLATES.flatMap((t) =>
      propertyBindings(t)
        .filter((p) => p.binding.name === 'inbox:correlationKey')
        .map((p) => [t, p] as const),
    );
    expect(keys.length).toBeGreaterThan(0);
    for (const [template, property] of keys) {
      const pattern = property.constraints?.pattern;
      expect(typeof pattern === 'string' ? pattern : pattern?.value).toBe(VARIABLE_NAME.source);
      const bad = 'order-id';
      expect(constraintProblems(property, bad)).not.toEqual([]);
      const xml = await applied(template, template.appliesTo[0] as string, { 'inbox:correlationKey': bad });
      await expect(parseProcessModel(xml)).rejects.toThrow(/is not a variable name/);
    }
  });
});
