/**
 * Reading Camunda 8's `zeebe:` extensions (zeebe-bpmn-moddle's descriptor)
 * into the engine's model: task definitions, io mappings, message
 * subscriptions, called elements, user task assignments and forms,
 * properties, task headers and multi-instance loops. Each reader checks what
 * it reads (a FEEL syntax error, a retries count that is no number) and
 * refuses with the element's id; check-extensions.ts refuses the zeebe
 * elements no reader here takes.
 */
import { feelBody, feelSyntaxError, feelVariable } from './feel';
import { type IoMapping, type JobDefinition, type Mapping, ModelError } from './model';
import { type Element, elements, isElement, text, VARIABLE_NAME } from './read';

/** The first extension element of `type` (`zeebe:TaskDefinition`) of an element, if any. */
export function extension(element: Element, type: string): Element | undefined {
  const container = element.extensionElements;
  return isElement(container) ? elements(container, 'values').find((v) => v.$type === type) : undefined;
}

/** A FEEL expression of the model, checked now: its body (without `=`), or the refusal naming the element. */
export function checkedFeel(body: string, id: string, where: string): string {
  const error = feelSyntaxError(body);
  if (error !== null) throw new ModelError(`${where}: ${error}`, id);
  return body;
}

/** The most failed runs a task definition may allow: more belongs in the handler. */
const MAX_RETRIES = 100;

/** `zeebe:taskDefinition type retries` and `zeebe:taskHeaders`, or undefined without a task definition. */
export function jobDefinitionOf(element: Element, id: string): JobDefinition | undefined {
  const definition = extension(element, 'zeebe:TaskDefinition');
  if (definition === undefined) return undefined;
  const type = text(definition, 'type');
  if (type === null) throw new ModelError('zeebe:taskDefinition without type: name the handler that runs it', id);
  if (type.startsWith('='))
    throw new ModelError(
      `zeebe:taskDefinition type ${JSON.stringify(type)} is an expression: write the type itself, the key of its handler in steps`,
      id,
    );
  const written = text(definition, 'retries');
  let retries: number | undefined;
  if (written !== null) {
    retries = /^[0-9]+$/.test(written) ? Number(written) : NaN;
    if (!Number.isInteger(retries) || retries < 1 || retries > MAX_RETRIES)
      throw new ModelError(
        `zeebe:taskDefinition retries ${JSON.stringify(written)}: write a whole number from 1 to ${MAX_RETRIES}`,
        id,
      );
  }
  const headers = extension(element, 'zeebe:TaskHeaders');
  const pairs: [string, string][] =
    headers === undefined ? [] : elements(headers, 'values').map((h) => [text(h, 'key') ?? '', text(h, 'value') ?? '']);
  return {
    type,
    ...(retries === undefined ? {} : { retries }),
    ...(pairs.length === 0 ? {} : { headers: Object.fromEntries(pairs) }),
  };
}

function mappingOf(parameter: Element, id: string, direction: 'input' | 'output'): Mapping {
  const target = text(parameter, 'target');
  if (target === null || !VARIABLE_NAME.test(target))
    throw new ModelError(
      `zeebe:${direction} target ${JSON.stringify(target ?? '')}: write a variable name ([A-Za-z_][A-Za-z0-9_]*)`,
      id,
    );
  const source = text(parameter, 'source') ?? '';
  const body = feelBody(source);
  if (body === null) return { target, value: source };
  return { target, expression: checkedFeel(body, id, `zeebe:${direction} ${target}`) };
}

/** `zeebe:ioMapping`, checked; undefined without one. */
export function ioMappingOf(element: Element, id: string): IoMapping | undefined {
  const io = extension(element, 'zeebe:IoMapping');
  if (io === undefined) return undefined;
  return {
    inputs: elements(io, 'inputParameters').map((p) => mappingOf(p, id, 'input')),
    outputs: elements(io, 'outputParameters').map((p) => mappingOf(p, id, 'output')),
  };
}

/** `zeebe:properties`, name to value; undefined without any. */
export function propertiesOf(element: Element): Readonly<Record<string, string>> | undefined {
  const properties = extension(element, 'zeebe:Properties');
  const pairs: [string, string][] =
    properties === undefined
      ? []
      : elements(properties, 'properties').map((p) => [text(p, 'name') ?? '', text(p, 'value') ?? '']);
  return pairs.length === 0 ? undefined : Object.fromEntries(pairs);
}

/** Where a message wait's key comes from: a variable, or a FEEL expression over the variables. */
export type CorrelationSource = (
  | { readonly correlationVariable: string }
  | { readonly correlationVariable: null; readonly correlationExpression: string }
) & {
  /** The `zeebe:subscription correlationKey` as written (`=orderId`), for people. */
  readonly correlationKeyText: string;
};

/**
 * The key of a message's `zeebe:subscription correlationKey`: `=orderId`
 * names a variable; any other FEEL (`=order.id`) is an expression; null
 * without a subscription.
 */
export function subscriptionKeyOf(message: Element, id: string): CorrelationSource | null {
  const subscription = extension(message, 'zeebe:Subscription');
  if (subscription === undefined) return null;
  const key = text(subscription, 'correlationKey');
  if (key === null) return null;
  const body = feelBody(key);
  if (body === null)
    throw new ModelError(
      `zeebe:subscription correlationKey ${JSON.stringify(key)} is no FEEL expression: write =variable (or =expression)`,
      id,
    );
  const variable = feelVariable(body);
  if (variable !== null) return { correlationVariable: variable, correlationKeyText: key };
  return {
    correlationKeyText: key,
    correlationVariable: null,
    correlationExpression: checkedFeel(body, id, 'zeebe:subscription correlationKey'),
  };
}

/**
 * `zeebe:calledElement processId`: the process a call activity starts, and
 * whether the child's variables come back (`propagateAllChildVariables`,
 * default true); null without one.
 */
export function calledElementOf(
  element: Element,
  id: string,
): { readonly processId: string; readonly propagateChildVariables: boolean } | null {
  const called = extension(element, 'zeebe:CalledElement');
  if (called === undefined) return null;
  const refuse = (what: string): never => {
    throw new ModelError(`zeebe:calledElement ${what}`, id);
  };
  if (text(called, 'processIdExpression') !== null || (text(called, 'processId') ?? '').startsWith('='))
    refuse('names its process by an expression: write the process id');
  if (called.propagateAllParentVariables === false)
    refuse('propagateAllParentVariables="false": a called process gets all variables of the caller; remove it');
  if (text(called, 'businessId') !== null)
    refuse("businessId: a called process has its caller's business key; remove it");
  const bindingType = text(called, 'bindingType');
  if (bindingType !== null && bindingType !== 'latest')
    refuse(`bindingType="${bindingType}": calls start the model deployed now (latest)`);
  const processId = text(called, 'processId') ?? refuse('without processId: name the id of the process it starts');
  return { processId, propagateChildVariables: called.propagateAllChildVariables !== false };
}

const list = (value: string | null): readonly string[] =>
  value === null ? [] : value.split(',').flatMap((g) => (g.trim() === '' ? [] : [g.trim()]));

/** A user task's `zeebe:assignmentDefinition` and `zeebe:formDefinition`, stored as written; undefined without either. */
export function userTaskOf(element: Element):
  | {
      assignee: string | null;
      candidateGroups: readonly string[];
      candidateUsers: readonly string[];
      formKey: string | null;
    }
  | undefined {
  const assignment = extension(element, 'zeebe:AssignmentDefinition');
  const form = extension(element, 'zeebe:FormDefinition');
  if (assignment === undefined && form === undefined) return undefined;
  const formKey =
    form === undefined
      ? null
      : (text(form, 'formKey') ??
        (text(form, 'formId') === null ? null : `formId:${text(form, 'formId') ?? ''}`) ??
        text(form, 'externalReference'));
  return {
    assignee: assignment === undefined ? null : text(assignment, 'assignee'),
    candidateGroups: list(assignment === undefined ? null : text(assignment, 'candidateGroups')),
    candidateUsers: list(assignment === undefined ? null : text(assignment, 'candidateUsers')),
    formKey,
  };
}

/** `zeebe:loopCharacteristics` of a multiInstanceLoopCharacteristics; undefined without one. */
export function zeebeLoopOf(
  loop: Element,
  id: string,
):
  | {
      readonly collection: string | null;
      readonly collectionExpression?: string;
      readonly elementVariable: string | null;
      readonly outputCollection: string | null;
      readonly outputElement: string | null;
      readonly outputElementExpression?: string;
    }
  | undefined {
  const zeebe = extension(loop, 'zeebe:LoopCharacteristics');
  if (zeebe === undefined) return undefined;
  const input = text(zeebe, 'inputCollection');
  const body = input === null ? null : feelBody(input);
  if (input !== null && body === null)
    throw new ModelError(`zeebe:loopCharacteristics inputCollection ${JSON.stringify(input)}: write =list`, id);
  const output = text(zeebe, 'outputElement');
  const outputBody = output === null ? null : feelBody(output);
  if (output !== null && outputBody === null)
    throw new ModelError(`zeebe:loopCharacteristics outputElement ${JSON.stringify(output)}: write =expression`, id);
  const collectionVariable = body === null ? null : feelVariable(body);
  const outputVariable = outputBody === null ? null : feelVariable(outputBody);
  return {
    collection: collectionVariable,
    ...(body !== null && collectionVariable === null
      ? { collectionExpression: checkedFeel(body, id, 'zeebe:loopCharacteristics inputCollection') }
      : {}),
    elementVariable: text(zeebe, 'inputElement'),
    outputCollection: text(zeebe, 'outputCollection'),
    outputElement: outputVariable,
    ...(outputBody !== null && outputVariable === null
      ? { outputElementExpression: checkedFeel(outputBody, id, 'zeebe:loopCharacteristics outputElement') }
      : {}),
  };
}
